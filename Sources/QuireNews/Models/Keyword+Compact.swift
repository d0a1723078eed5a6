public import QuireCodec

/// The compact fast path: the bytes of the synthesized `Codable` conformance, except that `name` is
/// written as an interned string (read back equal).
extension Keyword: CompactCodable {
    /// Field names in the order of the synthesized `Encodable` conformance; the keyword kind
    /// (`subject`, `persons`, …) is interned.
    public static let compactKeys = CompactKeySet(CodingKeys.self, interned: [.name])


    public func warm(_ writer: inout CompactObjectWriter) {
        writer.warm(name)
        writer.warm(value)
    }

    public func encode(to writer: inout CompactObjectWriter) throws {
        writer.write(name, for: CompactKey(CodingKeys.name))
        writer.write(value, for: CompactKey(CodingKeys.value))
        writer.writeIfPresent(rank, for: CompactKey(CodingKeys.rank))
    }

    public init(from reader: inout CompactObjectReader) throws {
        var name: String?
        var value: String?
        var rank: Int?
        while let key = try reader.next() {
            switch CodingKeys(rawValue: key.index) {
            case .name?: name = try reader.readString()
            case .value?: value = try reader.readString()
            case .rank?: rank = try reader.readInt()
            default: break
            }
        }
        self.init(name: try reader.require(name, CompactKey(CodingKeys.name)), value: try reader.require(value, CompactKey(CodingKeys.value)), rank: rank)
    }
}
