/// One tokenized field of a full-text index: its name in queries (`headline:storm`), the small id
/// its postings carry and its BM25F weight.
public struct StoreSearchField: Codable, Sendable, Hashable {
    /// The name used in queries, matched case-insensitively.
    public var name: String
    /// The id postings carry; below 16.
    public var id: UInt8
    /// The BM25F weight.
    public var weight: Double
    /// Where the text is in a stored record, as a dotted path of the generic value
    /// (`keywords.value` takes `value` of every element of the array `keywords`): lets tools that
    /// don't know the Swift type (`quire verify`) recompute a record's terms. Nil: not checked.
    public var path: String?

    /// A field; `id` must be below 16.
    public init(name: String, id: UInt8, weight: Double, path: String? = nil) {
        precondition(id < 16, "search field ids are below 16")
        precondition(!name.isEmpty, "search field names are non-empty")
        self.name = name
        self.id = id
        self.weight = weight
        self.path = path
    }
}

/// A query filter field (`section:Science`) answered by one of the collection's string indexes.
public struct StoreSearchFilter: Codable, Sendable, Hashable {
    /// The name used in queries (lowercased).
    public var name: String
    /// The collection's index holding the exact values.
    public var index: String

    /// A filter `name:` looked up in the index `index`.
    public init(name: String, index: String) {
        self.name = name.lowercased()
        self.index = index
    }
}

/// One piece of a value's text: a field id and the text (a multi-valued field gives several
/// pieces with the same id, in order; a phrase never spans two of them).
public struct SearchText: Sendable, Hashable {
    /// The ``StoreSearchField/id`` of the field.
    public var field: UInt8
    /// The text.
    public var text: String

    /// A piece of text of field `field`.
    public init(field: UInt8, _ text: String) {
        self.field = field
        self.text = text
    }
}

/// The stored description of a collection's full-text index.
public struct SearchDefinition: Codable, Sendable, Hashable {
    /// The tokenized fields.
    public var fields: [StoreSearchField]
    /// The filter fields.
    public var filters: [StoreSearchFilter]
    /// The record field holding the date (`publishedAt`) that `newest`/`oldest` and
    /// `since`/`until` use; nil when the values have none.
    public var dateField: String?
    /// The declared version of the text closure (nil: none): a new one rebuilds the index.
    public var version: Int?

    /// A definition.
    public init(
        fields: [StoreSearchField], filters: [StoreSearchFilter] = [], dateField: String? = nil, version: Int? = nil
    ) {
        self.fields = fields
        self.filters = filters
        self.dateField = dateField
        self.version = version
    }
}

/// A full-text index over a collection's values, kept in LMDB in the same transaction as the
/// records (see docs/SEARCH.md, "The index in the store").
///
/// ```swift
/// let notes = StoreCollection<Note>(name: "notes", key: { .string($0.id) })
///     .searchable(StoreSearchIndex(fields: [StoreSearchField(name: "body", id: 0, weight: 1, path: "body")]) {
///         [SearchText(field: 0, $0.body)]
///     })
/// ```
public struct StoreSearchIndex<Value: Sendable>: Sendable {
    /// What is stored in the collection's definition.
    public let definition: SearchDefinition
    /// The text of a value, field by field.
    public let text: @Sendable (Value) -> [SearchText]

    /// Declares an index of `fields` (ids distinct, below 16), filter fields answered by the
    /// collection's indexes, and the record field giving each value's date. A closure cannot be
    /// compared: when `text` changes what it yields, give a new `version`, and the next
    /// writable open rebuilds the index from the records (an unchanged one keeps the postings).
    public init(
        fields: [StoreSearchField], filters: [StoreSearchFilter] = [], dateField: String? = nil, version: Int? = nil,
        text: @escaping @Sendable (Value) -> [SearchText]
    ) {
        precondition(Set(fields.map(\.id)).count == fields.count, "search field ids must be distinct")
        // The postings keep a field id in four bits: 16 would be read back as field 0.
        precondition(fields.allSatisfy { $0.id < 16 }, "search field ids must be below 16")
        precondition(
            Set(fields.map { $0.name.lowercased() }).count == fields.count, "search field names must be distinct")
        self.definition = SearchDefinition(fields: fields, filters: filters, dateField: dateField, version: version)
        self.text = text
    }
}

extension StoreCollection {
    /// The collection with a full-text index: its records' text is tokenized and its postings
    /// written in the same transaction as the records.
    public func searchable(_ index: StoreSearchIndex<Value>) -> StoreCollection {
        with(search: index)
    }
}
