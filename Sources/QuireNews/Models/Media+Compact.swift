public import QuireCodec

/// The compact fast path: the bytes of the synthesized `Codable` conformance, except that `kind` is
/// written as an interned string (read back equal).
extension Media: CompactCodable {
    /// Field names in the order of the synthesized `Encodable` conformance; the image kind
    /// (`thumbnail`, `xlarge`, …) is interned.
    public static let compactKeys = CompactKeySet(["url", "width", "height", "caption", "credit", "kind"], interned: ["kind"])

    /// Positions in ``compactKeys``.
    private enum Keys {
        static let url: CompactKey = 0
        static let width: CompactKey = 1
        static let height: CompactKey = 2
        static let caption: CompactKey = 3
        static let credit: CompactKey = 4
        static let kind: CompactKey = 5
    }

    public func warm(_ writer: inout CompactObjectWriter) {
        writer.warm(url)
        writer.warm(caption)
        writer.warm(credit)
        writer.warm(kind)
    }

    public func encode(to writer: inout CompactObjectWriter) throws {
        writer.write(url, for: Keys.url)
        writer.writeIfPresent(width, for: Keys.width)
        writer.writeIfPresent(height, for: Keys.height)
        writer.writeIfPresent(caption, for: Keys.caption)
        writer.writeIfPresent(credit, for: Keys.credit)
        writer.writeIfPresent(kind, for: Keys.kind)
    }

    public init(from reader: inout CompactObjectReader) throws {
        var url: String?
        var width: Int?
        var height: Int?
        var caption: String?
        var credit: String?
        var kind: String?
        while let key = try reader.next() {
            switch key {
            case Keys.url: url = try reader.readString()
            case Keys.width: width = try reader.readInt()
            case Keys.height: height = try reader.readInt()
            case Keys.caption: caption = try reader.readString()
            case Keys.credit: credit = try reader.readString()
            case Keys.kind: kind = try reader.readString()
            default: break
            }
        }
        // One init from locals, built in place (see `InPlace`).
        self.init(
            url: try reader.require(url, Keys.url), width: width, height: height, caption: caption, credit: credit,
            kind: kind)
    }
}
