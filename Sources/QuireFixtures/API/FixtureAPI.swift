import Foundation
public import QuireNews
import Synchronization

/// Fake NYT Article Search v2 and Feedzilla v1 APIs on a ``LoopbackServer``, serving generated
/// articles.
///
/// NYT (`GET /svc/search/v2/articlesearch.json`): every `q` has its own deterministic result set
/// (``Configuration/nytArticlesPerQuery`` articles, the same for the same query string), spread
/// over 2012–2025, so `begin_date`/`end_date` (inclusive, `YYYYMMDD`) really narrow it and
/// date-window splitting works. `sort=newest|oldest` orders by publication time (ties by id); no
/// sort keeps generation order. Ten documents a page, pages `0…maxPage`; a page past the end is a
/// 200 with no documents. A wrong or missing `api-key` (when one is configured) gets a 401 fault.
///
/// Feedzilla (`GET /v1/categories.json`, `GET /v1/categories/<id>/articles.json?count=N`):
/// categories from ``ArticleGenerator/category(index:)``; each category lists up to `count`
/// (default 20, at most 100) articles. Story URLs echo the request's query plus `category=<id>`,
/// so one story has a different URL in each category, as on the real service.
///
/// Faults (``FixtureAPIFaultRule``) are injected by request number, NYT page or category.
public final class FixtureAPI: Sendable {
    private let server: LoopbackServer
    private let state: FixtureAPIState

    /// Starts the server on `127.0.0.1`, on `port` (0, the default: an ephemeral one).
    ///
    /// - Throws: ``LoopbackServerError`` when the socket cannot be set up (the port is taken).
    public init(configuration: Configuration = .init(), port: Int = 0) throws {
        let state = FixtureAPIState(configuration: configuration)
        self.state = state
        server = try LoopbackServer(port: port) { request in state.answer(request) }
    }

    /// `http://127.0.0.1:<port>`, without a trailing slash.
    public var baseURL: String { server.baseURL }

    /// The port chosen by the kernel.
    public var port: Int { server.port }

    /// The NYT endpoint: ``baseURL`` + `/svc/search/v2/articlesearch.json`.
    public var nytSearchURL: String { baseURL + FixtureAPI.nytSearchPath }

    /// The Feedzilla base: ``baseURL`` + `/v1`.
    public var feedzillaBaseURL: String { baseURL + "/v1" }

    /// How many requests were answered so far.
    public var requestCount: Int { state.requestCount }

    /// Every request so far as `path?query`, in arrival order, with the `api-key` value removed.
    public var requestLog: [String] { state.requestLog }

    /// Every document served so far, with its mutation and what a correct client stores or
    /// quarantines, in serving order.
    public var servedDocuments: [ServedDocument] { state.servedDocuments }

    /// Adds a fault rule while the server runs (after the configured ones).
    public func inject(_ rule: FixtureAPIFaultRule) { state.inject(rule) }

    /// Removes every fault rule.
    public func clearFaults() { state.clearFaults() }

    /// Stops the server; later requests fail to connect.
    public func stop() { server.stop() }

    /// The articles the NYT endpoint holds for `query` (unfiltered, in generation order).
    public func nytArticles(query: String) -> [Article] { state.corpus(query: query) }

    /// The articles category `categoryID` lists (at most `count`), in list order.
    public func feedzillaArticles(categoryID: Int, count: Int = 100) -> [Article] {
        state.feedzillaArticles(categoryID: categoryID, count: count)
    }

    /// The categories `/v1/categories.json` lists.
    public var feedzillaCategories: [Category] { state.categories }

    /// The NYT search path.
    public static let nytSearchPath = "/svc/search/v2/articlesearch.json"
}
