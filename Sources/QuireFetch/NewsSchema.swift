import Foundation
import Quire
import QuireNews

/// The collections and relations of a news store, shared by the fetch service and the CLI.
///
/// - `articles`: `Article` by id, indexed by publication date (`publishedAt`) and `section`;
/// - `lists`: `ArticleList` by id (a Feedzilla category page);
/// - `categories`: Feedzilla `Category` by id;
/// - `list-articles`: list id → its articles (a to-many relationship);
/// - `query-articles`: the query or category tag that fetched an article → the article.
public enum NewsSchema {
    /// Articles keyed by their id, indexed by date and section, with a full-text index
    /// (``articleSearch``), compressed with zstd and a dictionary the store trains once it
    /// holds `StoreOptions.dictionaryTrainingThreshold` articles (docs/FORMAT.md, "Compression").
    public static let articles = StoreCollection<Article>(
        name: "articles", key: { .string($0.id) }, indexes: [StoreIndex(\Article.publishedAt), StoreIndex(\Article.section)],
        compressed: true
    ).searchable(articleSearch)

    /// The publication-date index of `articles`.
    public static var byDate: StoreIndex<Article> { articles.indexes[0] }
    /// The section index of `articles`.
    public static var bySection: StoreIndex<Article> { articles.indexes[1] }

    /// Article lists keyed by id.
    public static let lists = StoreCollection<ArticleList>(name: "lists", key: { .string($0.id) })

    /// Feedzilla categories keyed by id.
    public static let categories = StoreCollection<QuireNews.Category>(name: "categories", key: { .int(Int64($0.id)) })

    /// A list's articles.
    public static let listArticles = StoreRelation(name: "list-articles", memberCollection: "articles")

    /// The articles each query (or category) fetched.
    public static let queryArticles = StoreRelation(name: "query-articles", memberCollection: "articles")

    /// Every news collection and relation, to declare when a store opens:
    /// `Store(path:schema: NewsSchema.schema)`.
    public static let schema = StoreSchema(articles, lists, categories).relations(listArticles, queryArticles)

    /// Registers every news collection and relation in `store`.
    public static func register(in store: Store) throws {
        try schema.declare(in: store)
    }
}
