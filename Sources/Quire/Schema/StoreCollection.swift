public import Foundation
import QuireCodec

/// A collection of `Codable` values keyed by an identification attribute.
///
/// Storing a value whose key is already present replaces it (RESTKit's identification
/// attribute): fetching the same article twice updates it instead of duplicating it.
///
/// ```swift
/// let notes = StoreCollection<Note>(name: "notes", key: { .string($0.id) },
///     indexes: [StoreIndex(name: "day", kind: .date, field: "day") { [.date($0.day)] }])
/// ```
public struct StoreCollection<Value: Codable & Sendable>: Sendable {
    /// The declaration's parts, shared by its copies: a read passes the collection around by
    /// value, and every reading thread would otherwise count references on each closure and
    /// array of it (one shared counter a copy, not seven).
    private let parts: Parts

    /// The collection's name, unique in a store (letters, digits, `-`, `_`, `.`).
    public var name: String { parts.name }
    /// Computes the identification key of a value.
    public var key: @Sendable (Value) -> StoreKey { parts.key }
    /// Secondary indexes kept in the same transaction as the records.
    public var indexes: [StoreIndex<Value>] { parts.indexes }
    /// Compress records with zstd (transparent to readers).
    public var compressed: Bool { parts.compressed }
    /// How values become bytes: the codec's Codable path, or the fast path of `CompactCodable`
    /// types (picked at compile time by the initializer that matches `Value`).
    var coder: RecordCoder<Value> { parts.coder }
    /// The full-text index, when the collection has one (``searchable(_:)``).
    public var search: StoreSearchIndex<Value>? { parts.search }
    /// `Value`'s full name, as the store's definition records it: worked out once, because a
    /// typed read compares it with the stored one.
    var valueTypeName: String { parts.valueTypeName }

    /// Declares a collection.
    public init(
        name: String, key: @escaping @Sendable (Value) -> StoreKey, indexes: [StoreIndex<Value>] = [],
        compressed: Bool = false
    ) {
        self.init(name: name, key: key, indexes: indexes, compressed: compressed, coder: .codable)
    }

    init(
        name: String, key: @escaping @Sendable (Value) -> StoreKey, indexes: [StoreIndex<Value>], compressed: Bool,
        coder: RecordCoder<Value>, search: StoreSearchIndex<Value>? = nil
    ) {
        precondition(StoreLayout.isValidName(name), "collection names must be non-empty and free of ':' and NUL")
        // Two indexes of one name would share one database, each deleting the other's entries.
        precondition(Set(indexes.map(\.name)).count == indexes.count, "the indexes of collection '\(name)' need distinct names")
        parts = Parts(
            name: name, key: key, indexes: indexes, compressed: compressed, coder: coder, search: search,
            valueTypeName: String(reflecting: Value.self))
    }

    /// The collection with `search` as its full-text index.
    func with(search: StoreSearchIndex<Value>) -> StoreCollection {
        StoreCollection(name: name, key: key, indexes: indexes, compressed: compressed, coder: coder, search: search)
    }

    /// The schema stored in the store's metadata.
    var definition: CollectionDefinition {
        CollectionDefinition(
            name: name, indexes: indexes.map { IndexDefinition(name: $0.name, kind: $0.kind, field: $0.field, version: $0.version) },
            compressed: compressed, valueType: valueTypeName, search: search?.definition)
    }

    /// What a declaration holds; immutable, so copies can share it.
    private final class Parts: Sendable {
        let name: String
        let key: @Sendable (Value) -> StoreKey
        let indexes: [StoreIndex<Value>]
        let compressed: Bool
        let coder: RecordCoder<Value>
        let search: StoreSearchIndex<Value>?
        let valueTypeName: String

        init(
            name: String, key: @escaping @Sendable (Value) -> StoreKey, indexes: [StoreIndex<Value>], compressed: Bool,
            coder: RecordCoder<Value>, search: StoreSearchIndex<Value>?, valueTypeName: String
        ) {
            self.name = name
            self.key = key
            self.indexes = indexes
            self.compressed = compressed
            self.coder = coder
            self.search = search
            self.valueTypeName = valueTypeName
        }
    }
}

extension StoreCollection where Value: CompactCodable {
    /// Declares a collection of a type with a hand-written compact fast path: records every
    /// reader understands, written and read without Codable's containers.
    public init(
        name: String, key: @escaping @Sendable (Value) -> StoreKey, indexes: [StoreIndex<Value>] = [],
        compressed: Bool = false
    ) {
        self.init(name: name, key: key, indexes: indexes, compressed: compressed, coder: .compact)
    }
}

/// Encodes and decodes one collection's values with the codec.
struct RecordCoder<Value: Codable & Sendable>: Sendable {
    let encode: @Sendable (Value, CompactEncoder, inout FieldTable) throws -> [UInt8]
    /// Encodes straight into an arena: no array per record.
    let encodeInto: @Sendable (Value, CompactEncoder, inout FieldTable, RecordArena) throws -> ArenaBytes
    let decode: @Sendable (UnsafeRawBufferPointer, CompactDecoder, FieldTable) throws -> Value

    /// Through `Encodable`/`Decodable` (which still take the fast path when the dynamic type has one).
    static var codable: RecordCoder {
        RecordCoder(
            encode: { value, encoder, fields in try encoder.encode(value, fields: &fields) },
            encodeInto: { value, encoder, fields, arena in
                try encoder.withEncoded(value, fields: &fields) { try arena.append($0) }
            },
            decode: { bytes, decoder, fields in try decoder.decode(Value.self, from: bytes, fields: fields) })
    }
}

extension RecordCoder where Value: CompactCodable {
    /// Through the hand-written fast path, resolved at compile time.
    static var compact: RecordCoder {
        RecordCoder(
            encode: { value, encoder, fields in try encoder.encode(value, fields: &fields) },
            encodeInto: { value, encoder, fields, arena in
                try encoder.withEncoded(value, fields: &fields) { try arena.append($0) }
            },
            decode: { bytes, decoder, fields in try decoder.decode(Value.self, from: bytes, fields: fields) })
    }
}

/// A secondary index: each value yields zero or more index keys that point back to it.
public struct StoreIndex<Value: Sendable>: Sendable {
    /// The index name, unique in its collection.
    public let name: String
    /// What the keys hold, so tools can render them without the Swift types.
    public let kind: IndexKind
    /// The field the keys come from, when the index is one field's value: lets tools that
    /// don't know the Swift type (`quire verify`) recompute the keys from stored records.
    public let field: String?
    /// Computes the index keys of a value (none to leave it out of the index).
    public let keys: @Sendable (Value) -> [StoreKey]
    /// The version of ``keys`` (nil: never versioned). A closure cannot be compared: change
    /// what it computes under the same name and give the index a new version, and the next
    /// writable open rebuilds it from the records (an unchanged version keeps the old entries).
    public let version: Int?
    /// True when the keys are exactly the stored field's value (a key-path index): an upsert
    /// then reads the old keys from the old record's field instead of decoding the record.
    let keysAreFieldValue: Bool

    /// Declares an index; `version` names the version of `keys` (see ``version``).
    public init(
        name: String, kind: IndexKind, field: String? = nil, version: Int? = nil,
        keys: @escaping @Sendable (Value) -> [StoreKey]
    ) {
        self.init(name: name, kind: kind, field: field, version: version, keysAreFieldValue: false, keys: keys)
    }

    init(
        name: String, kind: IndexKind, field: String?, version: Int? = nil, keysAreFieldValue: Bool,
        keys: @escaping @Sendable (Value) -> [StoreKey]
    ) {
        precondition(StoreLayout.isValidName(name), "index names must be non-empty and free of ':' and NUL")
        self.name = name
        self.kind = kind
        self.field = field
        self.version = version
        self.keysAreFieldValue = keysAreFieldValue && field != nil
        self.keys = keys
    }
}

/// The type of an index's keys.
public enum IndexKind: String, Codable, Sendable, Hashable {
    case string, int, date, bytes
}

/// A to-many relationship: an owner key refers to member keys of a collection, in member key
/// order (an article list and its articles, a query and the articles it fetched).
///
/// Removing an owner's members never deletes the members themselves.
public struct StoreRelation: Sendable, Hashable {
    /// The relation's name, unique in a store.
    public let name: String
    /// The collection whose keys are the members.
    public let memberCollection: String

    /// Declares a relation.
    public init(name: String, memberCollection: String) {
        precondition(StoreLayout.isValidName(name), "relation names must be non-empty and free of ':' and NUL")
        self.name = name
        self.memberCollection = memberCollection
    }
}

/// The stored description of a collection.
public struct CollectionDefinition: Codable, Sendable, Hashable {
    /// The collection's name.
    public var name: String
    /// Its secondary indexes, in declaration order.
    public var indexes: [IndexDefinition]
    /// Whether records are zstd-compressed.
    public var compressed: Bool
    /// The Swift type of its values (`QuireNews.Article`): a collection holds one type, and a
    /// declaration of another type over it is refused. `nil` in stores written before types were
    /// recorded (the first registration records it).
    public var valueType: String?
    /// The full-text index, when the collection has one (nil in stores written before search).
    public var search: SearchDefinition? = nil
}

/// The stored description of an index.
public struct IndexDefinition: Codable, Sendable, Hashable {
    public var name: String
    public var kind: IndexKind
    /// The field the keys come from, if the index is one field's value.
    public var field: String?
    /// The declared version of the keys' closure (nil: none): a new one rebuilds the index.
    public var version: Int?

    public init(name: String, kind: IndexKind, field: String? = nil, version: Int? = nil) {
        self.name = name
        self.kind = kind
        self.field = field
        self.version = version
    }
}

extension StoreCollection where Value: Identifiable, Value.ID: StoreKeyConvertible {
    /// Declares a collection of `Identifiable` values, keyed by their `id`.
    public init(name: String, indexes: [StoreIndex<Value>] = [], compressed: Bool = false) {
        self.init(name: name, key: { $0.id.storeKey }, indexes: indexes, compressed: compressed, coder: .codable)
    }
}

extension StoreCollection where Value: Identifiable & CompactCodable, Value.ID: StoreKeyConvertible {
    /// Declares a collection of `Identifiable` values with a compact fast path, keyed by their `id`.
    public init(name: String, indexes: [StoreIndex<Value>] = [], compressed: Bool = false) {
        self.init(name: name, key: { $0.id.storeKey }, indexes: indexes, compressed: compressed, coder: .compact)
    }
}

/// A type whose values are store keys: identifiers of `Identifiable` values.
public protocol StoreKeyConvertible: Sendable {
    /// The value as a key (order-preserving).
    var storeKey: StoreKey { get }
}

extension String: StoreKeyConvertible {
    public var storeKey: StoreKey { .string(self) }
}

extension Int: StoreKeyConvertible {
    public var storeKey: StoreKey { .int(Int64(self)) }
}

extension Int64: StoreKeyConvertible {
    public var storeKey: StoreKey { .int(self) }
}

extension UUID: StoreKeyConvertible {
    /// The UUID's lowercase text form.
    public var storeKey: StoreKey { .string(uuidString.lowercased()) }
}
