public import QuireCodec

/// The compact fast path: the same bytes as the synthesized `Codable` conformance.
extension ArticleList: CompactCodable {
    /// Field names in the order of the synthesized `Encodable` conformance.
    public static let compactKeys = CompactKeySet(CodingKeys.self)


    public func encode(to writer: inout CompactObjectWriter) throws {
        writer.write(id, for: CompactKey(CodingKeys.id))
        writer.writeIfPresent(title, for: CompactKey(CodingKeys.title))
        writer.writeIfPresent(url, for: CompactKey(CodingKeys.url))
        writer.writeIfPresent(articleDescription, for: CompactKey(CodingKeys.articleDescription))
        writer.write(articleIDs, for: CompactKey(CodingKeys.articleIDs))
    }

    public init(from reader: inout CompactObjectReader) throws {
        var id: String?
        var articleIDs: [String]?
        // Fields are set in place (optionals start nil): a delegating `self.init` copied the whole value.
        while let key = try reader.next() {
            switch CodingKeys(rawValue: key.index) {
            case .id?: id = try reader.readString()
            case .title?: title = try reader.readString()
            case .url?: url = try reader.readString()
            case .articleDescription?: articleDescription = try reader.readString()
            case .articleIDs?: articleIDs = try reader.readStrings()
            default: break
            }
        }
        self.id = try reader.require(id, CompactKey(CodingKeys.id))
        self.articleIDs = try reader.require(articleIDs, CompactKey(CodingKeys.articleIDs))
    }
}
