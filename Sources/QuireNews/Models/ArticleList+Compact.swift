public import QuireCodec

/// The compact fast path: the same bytes as the synthesized `Codable` conformance.
extension ArticleList: CompactCodable {
    /// Field names in the order of the synthesized `Encodable` conformance.
    public static let compactKeys = CompactKeySet(["id", "title", "url", "articleDescription", "articleIDs"])

    /// Positions in ``compactKeys``.
    private enum Keys {
        static let id: CompactKey = 0
        static let title: CompactKey = 1
        static let url: CompactKey = 2
        static let articleDescription: CompactKey = 3
        static let articleIDs: CompactKey = 4
    }

    public func encode(to writer: inout CompactObjectWriter) throws {
        writer.write(id, for: Keys.id)
        writer.writeIfPresent(title, for: Keys.title)
        writer.writeIfPresent(url, for: Keys.url)
        writer.writeIfPresent(articleDescription, for: Keys.articleDescription)
        writer.write(articleIDs, for: Keys.articleIDs)
    }

    public init(from reader: inout CompactObjectReader) throws {
        var id: String?
        var articleIDs: [String]?
        // Fields are set in place (optionals start nil): a delegating `self.init` copied the whole value.
        while let key = try reader.next() {
            switch key {
            case Keys.id: id = try reader.readString()
            case Keys.title: title = try reader.readString()
            case Keys.url: url = try reader.readString()
            case Keys.articleDescription: articleDescription = try reader.readString()
            case Keys.articleIDs: articleIDs = try reader.readStrings()
            default: break
            }
        }
        self.id = try reader.require(id, Keys.id)
        self.articleIDs = try reader.require(articleIDs, Keys.articleIDs)
    }
}
