/// Interned field names, and interned values: a record carries small ids instead of the text.
///
/// An id is the index of its entry in ``names``. The table is append-only: an id, once given,
/// always means the same entry, so a record written with an older table stays readable with a newer
/// one. A reader whose table is older than a record gets ``CompactDecodingError/Kind/unknownFieldID(_:)``
/// (never a silently wrong name) and can reload its table and retry.
///
/// Besides field names, the table holds **interned values** (docs/FORMAT.md, "Interned strings"):
/// short strings of the fields a ``CompactKeySet`` declares enumeration-like, stored as
/// ``internedValuePrefix`` followed by the value. They are entries like any other (appended on
/// first use, persisted with the names), so readers need nothing new to stay current.
public struct FieldTable: Sendable, Hashable {
    /// The entries in id order: field names, and interned values with their prefix.
    public private(set) var names: [String]
    private var ids: [ExactText: UInt32]
    /// For each id, the interned value (the entry without its prefix), or nil for a field name.
    /// Kept beside ``names`` so that reading an interned string costs no string work.
    private(set) var values: [String?]
    /// How many entries are interned values.
    public private(set) var internedValueCount: Int

    /// The first character of an entry that holds an interned value rather than a field name.
    public static let internedValuePrefix: Character = "\u{1}"
    /// Interned values are at least this many UTF-8 bytes: shorter strings are as small written out.
    public static let internedValueMinimumLength = 3
    /// Interned values are at most this many UTF-8 bytes: longer strings are written out.
    public static let internedValueMaximumLength = 64
    /// A table holds at most this many interned values; after that, new values are written out.
    /// With the length limit this bounds the values' share of a table to about 66 KB.
    public static let internedValueLimit = 1024

    /// Creates a table from entries in id order. A repeated entry keeps its first id.
    public init(names: [String] = []) {
        self.names = names
        var ids: [ExactText: UInt32] = [:]
        ids.reserveCapacity(names.count)
        for (index, name) in names.enumerated() where ids[ExactText(name)] == nil {
            ids[ExactText(name)] = UInt32(index)
        }
        self.ids = ids
        self.values = FieldTable.values(of: names)
        self.internedValueCount = values.reduce(0) { $0 + ($1 == nil ? 0 : 1) }
    }

    /// The interned value held by each entry (nil for field names).
    static func values(of names: [String]) -> [String?] {
        names.map { name in
            name.utf8.first == 1 ? String(Substring(name.unicodeScalars.dropFirst())) : nil
        }
    }

    /// The number of entries (field names and interned values).
    public var count: Int { names.count }

    /// The id of `name`, or nil when it was never interned.
    public func id(of name: String) -> UInt32? { ids[ExactText(name)] }

    /// The name for `id`, or nil when the id is not in this table.
    public func name(of id: UInt32) -> String? {
        Int(id) < names.count ? names[Int(id)] : nil
    }

    /// The interned value for `id`, or nil when `id` is not in this table or names a field.
    public func internedValue(of id: UInt32) -> String? {
        Int(id) < values.count ? values[Int(id)] : nil
    }

    /// Returns the id of `name`, appending it when it is new.
    @discardableResult
    public mutating func intern(_ name: String) -> UInt32 {
        if let id = ids[ExactText(name)] { return id }
        let id = UInt32(names.count)
        names.append(name)
        ids[ExactText(name)] = id
        let value: String? = name.utf8.first == 1 ? String(Substring(name.unicodeScalars.dropFirst())) : nil
        values.append(value)
        if value != nil { internedValueCount += 1 }
        return id
    }

    /// The id of the interned value `value`, appending it when it is new; nil when `value` is
    /// outside the length bounds, or new while the table already holds ``internedValueLimit`` values.
    public mutating func internValue(_ value: String) -> UInt32? {
        let length = value.utf8.count
        guard length >= FieldTable.internedValueMinimumLength, length <= FieldTable.internedValueMaximumLength
        else { return nil }
        let entry = String(FieldTable.internedValuePrefix) + value
        if let id = ids[ExactText(entry)] { return id }
        guard internedValueCount < FieldTable.internedValueLimit else { return nil }
        return intern(entry)
    }

    /// Entry by entry, by their bytes (`String`'s own equality is canonical equivalence).
    public static func == (lhs: FieldTable, rhs: FieldTable) -> Bool {
        lhs.names.count == rhs.names.count && zip(lhs.names, rhs.names).allSatisfy { $0.utf8.elementsEqual($1.utf8) }
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(names) }
}

/// A string compared and hashed by its UTF-8 bytes. `String`'s own equality is canonical
/// equivalence: as a dictionary key it merged `café` composed and decomposed into one entry, so an
/// interned value (or a field name) came back in the other form than it was written.
struct ExactText: Hashable {
    let text: String

    init(_ text: String) { self.text = text }

    static func == (lhs: ExactText, rhs: ExactText) -> Bool { lhs.text.utf8.elementsEqual(rhs.text.utf8) }

    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
