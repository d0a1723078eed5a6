/// An image attached to an article (`multimedia`).
public struct Media: Codable, Sendable, Hashable {
    /// The absolute image address (the NYT's relative `images/…` paths are prefixed with
    /// `https://static01.nyt.com/`).
    public var url: String
    /// Width in pixels, when given.
    public var width: Int?
    /// Height in pixels, when given.
    public var height: Int?
    /// The caption, when given.
    public var caption: String?
    /// The credit, when given.
    public var credit: String?
    /// The rendition: the NYT `subtype` (`xlarge`, `thumbnail`, `wide`), `default`/`thumbnail` for
    /// the 2025 object shape, or a Feedzilla enclosure's media type.
    public var kind: String?

    /// The coding keys: names (the case names) and compact positions (the raw values), in
    /// property order.
    enum CodingKeys: Int, CodingKey, CaseIterable {
        case url, width, height, caption, credit, kind
    }

    /// Creates an image.
    public init(
        url: String, width: Int? = nil, height: Int? = nil, caption: String? = nil, credit: String? = nil,
        kind: String? = nil
    ) {
        self.url = url
        self.width = width
        self.height = height
        self.caption = caption
        self.credit = credit
        self.kind = kind
    }
}
