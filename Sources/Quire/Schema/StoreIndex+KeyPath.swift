public import Foundation

/// A value an index can be declared on by key path: it knows its ``IndexKind`` and its keys.
public protocol StoreIndexable: Sendable {
    /// The kind of the index keys.
    static var indexKind: IndexKind { get }
    /// The index keys of one value (none leaves the record out of the index).
    var indexKeys: [StoreKey] { get }
}

extension String: StoreIndexable {
    public static var indexKind: IndexKind { .string }
    /// The string, or no key for an empty one (a key has at least a byte): `""` is left out of
    /// the index as `nil` is.
    public var indexKeys: [StoreKey] { isEmpty ? [] : [.string(self)] }
}

extension Int: StoreIndexable {
    public static var indexKind: IndexKind { .int }
    public var indexKeys: [StoreKey] { [.int(Int64(self))] }
}

extension Int64: StoreIndexable {
    public static var indexKind: IndexKind { .int }
    public var indexKeys: [StoreKey] { [.int(self)] }
}

extension Date: StoreIndexable {
    public static var indexKind: IndexKind { .date }
    public var indexKeys: [StoreKey] { [.date(self)] }
}

extension Optional: StoreIndexable where Wrapped: StoreIndexable {
    public static var indexKind: IndexKind { Wrapped.indexKind }
    public var indexKeys: [StoreKey] { self?.indexKeys ?? [] }
}

extension Array: StoreIndexable where Element: StoreIndexable {
    /// An array gives one key per element (a to-many index, such as authors).
    public static var indexKind: IndexKind { Element.indexKind }
    public var indexKeys: [StoreKey] { flatMap(\.indexKeys) }
}

extension StoreIndex {
    /// An index on one stored property, declared by its key path: the name and the field are the
    /// property's name, the kind follows from its type, `nil`, empty strings and empty arrays
    /// leave the record out of the index.
    ///
    /// ```swift
    /// let byDate = StoreIndex(\Article.publishedAt)      // "publishedAt", .date
    /// let byAuthor = StoreIndex(\Article.authors)        // one entry per author
    /// ```
    ///
    /// The record's field of that name stands for the keys: a replaced record's old entries are
    /// read from it without decoding the record, and `verify` checks the index against it. A
    /// type whose `encode(to:)` leaves the property out (a default value skipped), renames it
    /// or writes it in another form must declare the index with a closure instead
    /// and no `field:` (`StoreIndex(name:kind:keys:)`), or replaced records can leave entries
    /// behind.
    ///
    /// - Parameters:
    ///   - keyPath: The stored property the keys come from.
    ///   - name: The index name, when the property's cannot be read from the key path (it is
    ///     derived from the key path's description, which names stored properties; a nested
    ///     path, `\Note.meta.tag`, is named by its last property).
    ///   - version: The version of the keys a custom `StoreIndexable` computes (see
    ///     ``version``): give a new one when its `indexKeys` change, and the index is rebuilt.
    public init<T: StoreIndexable>(_ keyPath: KeyPath<Value, T> & Sendable, name: String? = nil, version: Int? = nil) {
        let property = Self.topLevelProperty(of: keyPath)
        let indexName = name ?? property ?? Self.lastComponent(of: keyPath)
        precondition(
            !indexName.isEmpty && indexName.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" },
            "StoreIndex: cannot name the index of \(keyPath); pass name:")
        // The stored field stands for the keys (read without decoding the record, and checked
        // by verify) only when it holds them as they are: a top-level property of a type whose
        // keys Quire defines. A custom `StoreIndexable` (keys lower-cased, say) or a nested
        // path (whose field is not at the top) is read through the decoded value.
        self.init(
            name: indexName, kind: T.indexKind, field: property, version: version,
            keysAreFieldValue: property != nil && T.self is any FieldValueIndexable.Type
        ) { value in
            value[keyPath: keyPath].indexKeys
        }
    }

    /// `tag` of `\Note.meta.tag`: a nested path's default name.
    static func lastComponent(of keyPath: AnyKeyPath) -> String {
        let text = String(describing: keyPath)
        guard let dot = text.lastIndex(of: ".") else { return "" }
        return String(text[text.index(after: dot)...])
    }

    /// `publishedAt` of `\Article.publishedAt`; nil for a nested path (`\Note.meta.tag`).
    static func topLevelProperty(of keyPath: AnyKeyPath) -> String? {
        // A key path describes itself as `\` + its root type's description + its properties.
        let text = String(describing: keyPath)
        let prefix = "\\" + String(describing: Value.self) + "."
        guard text.hasPrefix(prefix) else { return nil }
        let property = text.dropFirst(prefix.count)
        guard !property.isEmpty, property.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { return nil }
        return String(property)
    }
}

/// The types whose index keys are their stored field's value as it is (a string, a number, a
/// date, optional or in an array): an index on one reads its old keys from the stored record.
protocol FieldValueIndexable {}
extension String: FieldValueIndexable {}
extension Int: FieldValueIndexable {}
extension Int64: FieldValueIndexable {}
extension Date: FieldValueIndexable {}
extension Optional: FieldValueIndexable where Wrapped: FieldValueIndexable {}
extension Array: FieldValueIndexable where Element: FieldValueIndexable {}
