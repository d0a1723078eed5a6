public import QuireCodec

/// The compact fast path: the bytes of the synthesized `Codable` conformance, except that `kind` is
/// written as an interned string (read back equal).
extension Media: CompactCodable {
    /// Field names in the order of the synthesized `Encodable` conformance; the image kind
    /// (`thumbnail`, `xlarge`, …) is interned.
    public static let compactKeys = CompactKeySet(CodingKeys.self, interned: [.kind])


    public func warm(_ writer: inout CompactObjectWriter) {
        writer.warm(url)
        writer.warm(caption)
        writer.warm(credit)
        writer.warm(kind)
    }

    public func encode(to writer: inout CompactObjectWriter) throws {
        writer.write(url, for: CompactKey(CodingKeys.url))
        writer.writeIfPresent(width, for: CompactKey(CodingKeys.width))
        writer.writeIfPresent(height, for: CompactKey(CodingKeys.height))
        writer.writeIfPresent(caption, for: CompactKey(CodingKeys.caption))
        writer.writeIfPresent(credit, for: CompactKey(CodingKeys.credit))
        writer.writeIfPresent(kind, for: CompactKey(CodingKeys.kind))
    }

    public init(from reader: inout CompactObjectReader) throws {
        var url: String?
        var width: Int?
        var height: Int?
        var caption: String?
        var credit: String?
        var kind: String?
        while let key = try reader.next() {
            switch CodingKeys(rawValue: key.index) {
            case .url?: url = try reader.readString()
            case .width?: width = try reader.readInt()
            case .height?: height = try reader.readInt()
            case .caption?: caption = try reader.readString()
            case .credit?: credit = try reader.readString()
            case .kind?: kind = try reader.readString()
            default: break
            }
        }
        // One init from locals (see `Article.init(compact:)`).
        self.init(
            url: try reader.require(url, CompactKey(CodingKeys.url)), width: width, height: height, caption: caption, credit: credit,
            kind: kind)
    }
}
