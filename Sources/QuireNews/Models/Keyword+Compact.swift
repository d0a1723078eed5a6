public import QuireCodec

/// The compact fast path: the bytes of the synthesized `Codable` conformance, except that `name` is
/// written as an interned string (read back equal).
extension Keyword: CompactCodable {
    /// Field names in the order of the synthesized `Encodable` conformance; the keyword kind
    /// (`subject`, `persons`, …) is interned.
    public static let compactKeys = CompactKeySet(["name", "value", "rank"], interned: ["name"])

    /// Positions in ``compactKeys``.
    private enum Keys {
        static let name: CompactKey = 0
        static let value: CompactKey = 1
        static let rank: CompactKey = 2
    }

    public func warm(_ writer: inout CompactObjectWriter) {
        writer.warm(name)
        writer.warm(value)
    }

    public func encode(to writer: inout CompactObjectWriter) throws {
        writer.write(name, for: Keys.name)
        writer.write(value, for: Keys.value)
        writer.writeIfPresent(rank, for: Keys.rank)
    }

    public init(from reader: inout CompactObjectReader) throws {
        var name: String?
        var value: String?
        var rank: Int?
        while let key = try reader.next() {
            switch key {
            case Keys.name: name = try reader.readString()
            case Keys.value: value = try reader.readString()
            case Keys.rank: rank = try reader.readInt()
            default: break
            }
        }
        self.init(name: try reader.require(name, Keys.name), value: try reader.require(value, Keys.value), rank: rank)
    }
}
