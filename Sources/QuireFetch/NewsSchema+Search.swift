import Quire
import QuireNews

extension NewsSchema {
    /// The full-text index of `articles`: the fields, ids and weights of QuireText's
    /// `TextSchema.articles` (headline 3, abstract 1.5, snippet 0.5, lead paragraph 1, keywords'
    /// values 2, byline 0.5), `section:` through the section index, dates from `publishedAt`.
    public static let articleSearch = StoreSearchIndex<Article>(
        fields: [
            StoreSearchField(name: "headline", id: 0, weight: 3, path: "headline"),
            StoreSearchField(name: "abstract", id: 1, weight: 1.5, path: "abstract"),
            StoreSearchField(name: "snippet", id: 2, weight: 0.5, path: "snippet"),
            StoreSearchField(name: "lead", id: 3, weight: 1, path: "leadParagraph"),
            StoreSearchField(name: "keywords", id: 4, weight: 2, path: "keywords.value"),
            StoreSearchField(name: "byline", id: 5, weight: 0.5, path: "byline"),
        ],
        filters: [StoreSearchFilter(name: "section", index: "section")],
        dateField: "publishedAt"
    ) { article in
        var texts: [SearchText] = []
        texts.reserveCapacity(6 + (article.keywords?.count ?? 0))
        if let t = article.headline { texts.append(SearchText(field: 0, t)) }
        if let t = article.abstract { texts.append(SearchText(field: 1, t)) }
        if let t = article.snippet { texts.append(SearchText(field: 2, t)) }
        if let t = article.leadParagraph { texts.append(SearchText(field: 3, t)) }
        for keyword in article.keywords ?? [] { texts.append(SearchText(field: 4, keyword.value)) }
        if let t = article.byline { texts.append(SearchText(field: 5, t)) }
        return texts
    }
}
