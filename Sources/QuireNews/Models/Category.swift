/// A Feedzilla category (`/v1/categories.json`).
public struct Category: Codable, Sendable, Hashable {
    /// `category_id`.
    public var id: Int
    /// `display_category_name` (`nil` when the API sends `""`).
    public var displayName: String?
    /// `english_category_name`.
    public var englishName: String?
    /// `url_category_name` (`nil` when the API sends `""`).
    public var urlName: String?

    /// Creates a category.
    public init(id: Int, displayName: String? = nil, englishName: String? = nil, urlName: String? = nil) {
        self.id = id
        self.displayName = displayName
        self.englishName = englishName
        self.urlName = urlName
    }
}
