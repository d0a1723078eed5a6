/// A list of articles, such as a Feedzilla category's article list.
///
/// The articles are a to-many relationship by identity: `articleIDs` holds their ``Article/id``s in
/// the order the source gave them, and the articles themselves are stored as their own records.
public struct ArticleList: Codable, Sendable, Hashable {
    /// The list's identity (Feedzilla: `feedzilla:category:<id>`).
    public var id: String
    /// The list's title.
    public var title: String?
    /// The list's address (Feedzilla `syndication_url`).
    public var url: String?
    /// The list's description (Feedzilla `description`).
    public var articleDescription: String?
    /// The ids of the list's articles, in source order, without duplicates.
    public var articleIDs: [String]

    /// Creates a list.
    public init(id: String, title: String? = nil, url: String? = nil, articleDescription: String? = nil, articleIDs: [String] = []) {
        self.id = id
        self.title = title
        self.url = url
        self.articleDescription = articleDescription
        self.articleIDs = articleIDs
    }

    /// The coding keys: names (the case names) and compact positions (the raw values).
    enum CodingKeys: Int, CodingKey, CaseIterable {
        case id, title, url, articleDescription, articleIDs
    }
}
