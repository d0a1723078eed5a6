/// The article id a fetched document would be stored under, read from its identity fields alone.
///
/// For a document that could not be mapped (a bad date, a member nested too deeply): its
/// quarantined copy is filed under that id, so that a later fetch of the same article, mapped
/// fine, supersedes it instead of being rolled back by a remap.
public enum ArticleIdentity {
    /// The id under `mapping` (`nyt` or `feedzilla`), or nil when the document has none (not an
    /// object, or no usable `_id`, `uri`, `web_url`, or Feedzilla `url`).
    public static func id(ofDocument raw: [UInt8], mapping: String) -> String? {
        guard let (value, _) = try? JSONParser.parseSettingAsideBadValues(raw), case .object(let object) = value else {
            return nil
        }
        if mapping == "feedzilla" {
            guard case .string(let url)? = object[Feedzilla.storyURLKey], !NewsText.isBlank(url) else { return nil }
            return Feedzilla.storyID(forURL: url)
        }
        // The mapping's own paths, but past one of the wrong type (`"_id": 12345`, the reason the
        // document may be quarantined) to the next, which still names the article.
        for path in NYTArticleSearch.ArticleRules.idPaths {
            if case .string(let id)? = object[path.description], !NewsText.isBlank(id) { return id }
        }
        return nil
    }
}
