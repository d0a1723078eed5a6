import Synchronization

/// A type with a hand-written compact encoding: ``CompactEncoder`` calls ``encode(to:)`` instead of
/// `Encodable.encode(to:)`, skipping Codable's containers.
///
/// The conformance must write the same fields, in the same order and with the same names
/// (``compactKeys``), as the type's `Encodable` conformance, so that both give identical bytes —
/// except that string values of keys the set declares interned are written as interned strings,
/// which every reader reads back as the same strings.
public protocol CompactEncodable: Encodable {
    /// The type's field names, in the order its `Encodable` conformance writes them.
    static var compactKeys: CompactKeySet { get }
    /// Writes the type's fields, in the order of its `Encodable` conformance.
    func encode(to writer: inout CompactObjectWriter) throws
    /// Passes the type's string fields to ``CompactObjectWriter/warm(_:)-(String?)`` before any
    /// field is written (the encoder calls it; optional: the default does nothing). For values
    /// not in cache, this makes their memory round trips overlap: encoding news articles from a
    /// large array ran ~15% faster.
    func warm(_ writer: inout CompactObjectWriter)
}

extension CompactEncodable {
    /// Warms nothing.
    @inlinable public func warm(_ writer: inout CompactObjectWriter) {}
}

/// A type with a hand-written compact decoding: ``CompactDecoder`` calls ``init(from:)`` instead of
/// `Decodable.init(from:)`.
public protocol CompactDecodable: Decodable {
    /// The type's field names (the coding keys' string values). Make it a `static let`: encoders
    /// and decoders keep their tables per key set, so a set made at every use costs a table each.
    static var compactKeys: CompactKeySet { get }
    /// Reads the type's fields with `while let key = try reader.next()`.
    init(from reader: inout CompactObjectReader) throws
}

/// A type with both hand-written compact conformances.
public typealias CompactCodable = CompactEncodable & CompactDecodable

/// One field of a ``CompactKeySet``: its position in the set.
public struct CompactKey: Sendable, Hashable, ExpressibleByIntegerLiteral {
    /// The position of the field's name in its ``CompactKeySet``.
    public let index: Int

    /// The key at `index` of its set.
    public init(_ index: Int) { self.index = index }
    /// The key at `value` of its set.
    public init(integerLiteral value: Int) { self.index = value }
}

/// The field names of one ``CompactEncodable`` or ``CompactDecodable`` type, declared once per type.
///
/// Writers resolve each name to a field id of the caller's ``FieldTable`` the first time it is
/// written, interning it exactly when (and in the order) the Codable path would; readers map field
/// ids to key positions through a table built once per field table.
///
/// Keys declared `interned` hold enumeration-like strings (a section, a kind): for them
/// ``CompactObjectWriter``'s `String`, `String?` and `[String]` writes store each value of 3…64
/// UTF-8 bytes as an interned string, an id into the field table (docs/FORMAT.md, "Interned
/// strings"); every reader reads it back as the string. Declare only fields with a small set of
/// values: every distinct value becomes a table entry, up to ``FieldTable/internedValueLimit``.
public final class CompactKeySet: Sendable {
    /// The names, in key order (``CompactKey/index``).
    public let names: [String]
    /// For each key, whether its string values are interned.
    public let internedKeys: [Bool]
    private let positions: [String: Int32]
    /// The id → position table of the field table seen last (most processes use one table).
    private let lastTable = Locked<DecodeTable?>(nil)

    struct DecodeTable: @unchecked Sendable {
        // @unchecked: immutable arrays, shared read-only.
        let names: [String]
        let positions: [Int32]
    }

    /// Creates a key set; names must be unique, and `interned` must name keys of the set.
    public init(_ names: [String], interned: Set<String> = []) {
        self.names = names
        var positions: [String: Int32] = [:]
        for (index, name) in names.enumerated() {
            precondition(positions[name] == nil, "CompactKeySet: duplicate name \(name)")
            positions[name] = Int32(index)
        }
        for name in interned {
            precondition(positions[name] != nil, "CompactKeySet: interned key \(name) is not in the set")
        }
        self.positions = positions
        self.internedKeys = names.map { interned.contains($0) }
    }

    /// The key named `name`, or nil when the set lacks it.
    public func key(_ name: String) -> CompactKey? {
        positions[name].map { CompactKey(Int($0)) }
    }

    /// For each field id of `names`, the position of that name in this set, or -1.
    func decodeTable(for names: [String]) -> [Int32] {
        if let table = lastTable.withLock({ last -> [Int32]? in
            guard let last, sameStorage(last.names, names) else { return nil }
            return last.positions
        }) {
            return table
        }
        let table = names.map { positions[$0] ?? -1 }
        let entry = DecodeTable(names: names, positions: table)
        lastTable.withLock { $0 = entry }
        return table
    }
}

/// True when both arrays share storage. A holder of one keeps that storage alive and unchanged, so
/// the same storage means the same elements.
@inline(__always) func sameStorage<Element>(_ a: [Element], _ b: [Element]) -> Bool {
    a.count == b.count
        && a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in x.baseAddress == y.baseAddress } }
}

/// A field name as a coding key: coding paths in errors, and `super`.
struct NamedKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}
