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
    /// - Parameters:
    ///   - keyPath: The stored property the keys come from.
    ///   - name: The index (and field) name, when the property's cannot be read from the key path
    ///     (it is derived from the key path's description, which names stored properties).
    public init<T: StoreIndexable>(_ keyPath: KeyPath<Value, T> & Sendable, name: String? = nil) {
        let field = name ?? Self.propertyName(of: keyPath)
        precondition(
            !field.isEmpty && field.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" },
            "StoreIndex: cannot name the index of \(keyPath); pass name:")
        self.init(name: field, kind: T.indexKind, field: field, keysAreFieldValue: true) { value in
            value[keyPath: keyPath].indexKeys
        }
    }

    /// `publishedAt` of `\Article.publishedAt`.
    static func propertyName(of keyPath: AnyKeyPath) -> String {
        let text = String(describing: keyPath)
        guard let dot = text.lastIndex(of: ".") else { return "" }
        return String(text[text.index(after: dot)...])
    }
}
