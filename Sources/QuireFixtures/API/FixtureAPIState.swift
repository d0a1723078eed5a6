import Foundation
import QuireNews
import Synchronization

/// The fixture API's data and mutable state (request counter, fault rules, caches), shared with
/// the server's connection threads.
final class FixtureAPIState: Sendable {
    let configuration: FixtureAPI.Configuration
    let categories: [Category]
    private let mutable: Mutex<Mutable>

    private struct Mutable {
        var requestCount = 0
        var log: [String] = []
        var rules: [(rule: FixtureAPIFaultRule, remaining: Int?)] = []
        var corpora: [String: [Article]] = [:]
        /// The matches of the last query, window and order asked for: a walk asks for page after
        /// page of one window, and filtering and sorting the whole corpus for each made a large
        /// demo quadratic (300,000 articles at 25 a second).
        var lastMatches: (key: String, articles: [Article])?
        var feedzillaPool: [Article]?
        var served: [ServedDocument] = []
    }

    init(configuration: FixtureAPI.Configuration) {
        self.configuration = configuration
        let generator = ArticleGenerator(seed: configuration.seed)
        categories = (0..<max(0, configuration.feedzillaCategoryCount)).map { generator.category(index: $0) }
        mutable = Mutex(Mutable(rules: configuration.faults.map { ($0, $0.times) }))
    }

    var requestCount: Int { mutable.withLock { $0.requestCount } }
    var servedDocuments: [ServedDocument] { mutable.withLock { $0.served } }
    var requestLog: [String] { mutable.withLock { $0.log } }

    func inject(_ rule: FixtureAPIFaultRule) { mutable.withLock { $0.rules.append((rule, rule.times)) } }
    func clearFaults() { mutable.withLock { $0.rules.removeAll() } }

    // MARK: Routing

    func answer(_ request: FixtureRequest) -> FixtureResponse {
        let number = mutable.withLock { state in
            state.requestCount += 1
            state.log.append(Self.logLine(request))
            return state.requestCount
        }
        let route = Route(request)
        if let fault = takeFault(requestNumber: number, route: route) {
            return respond(fault: fault, normal: answerNormally(request, route: route))
        }
        return answerNormally(request, route: route)
    }

    enum Route: Equatable {
        case nyt(page: Int?)
        case feedzillaCategories
        case feedzillaCategory(Int)
        case unknown

        init(_ request: FixtureRequest) {
            let path = request.path
            if path == FixtureAPI.nytSearchPath {
                self = .nyt(page: request.queryValue("page").flatMap { Int($0) } ?? 0)
            } else if path == "/v1/categories.json" {
                self = .feedzillaCategories
            } else if path.hasPrefix("/v1/categories/"), path.hasSuffix("/articles.json"),
                let id = Int(path.dropFirst("/v1/categories/".count).dropLast("/articles.json".count))
            {
                self = .feedzillaCategory(id)
            } else {
                self = .unknown
            }
        }
    }

    private func answerNormally(_ request: FixtureRequest, route: Route) -> FixtureResponse {
        switch route {
        case .nyt: answerNYT(request)
        case .feedzillaCategories: .json(bytes: feedzillaCategoriesBody(categories))
        case .feedzillaCategory(let id): answerFeedzillaCategory(request, id: id)
        case .unknown: .notFound()
        }
    }

    /// The log line of a request: `path?query` without the key's value.
    private static func logLine(_ request: FixtureRequest) -> String {
        let query = request.query.filter { $0.0 != "api-key" }.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        return query.isEmpty ? request.path : request.path + "?" + query
    }

    // MARK: Faults

    private func takeFault(requestNumber: Int, route: Route) -> FixtureAPIFault? {
        mutable.withLock { state in
            for index in state.rules.indices {
                let (rule, remaining) = state.rules[index]
                if let remaining, remaining <= 0 { continue }
                guard Self.matches(rule.trigger, requestNumber: requestNumber, route: route) else { continue }
                if let remaining { state.rules[index].remaining = remaining - 1 }
                return rule.fault
            }
            return nil
        }
    }

    private static func matches(_ trigger: FixtureAPIFaultRule.Trigger, requestNumber: Int, route: Route) -> Bool {
        switch (trigger, route) {
        case (.requestNumbers(let range), _): range.contains(requestNumber)
        case (.nytPage(let page), .nyt(let requested)): page == requested
        case (.everyNYTRequest, .nyt): true
        case (.feedzillaCategories, .feedzillaCategories): true
        case (.feedzillaCategory(let id), .feedzillaCategory(let requested)): id == requested
        default: false
        }
    }

    private func respond(fault: FixtureAPIFault, normal: FixtureResponse) -> FixtureResponse {
        switch fault {
        case .rateLimited: return .json(status: 429, bytes: NYTErrorBody.rateLimited.body)
        case .rateLimitedRetryAfter(let seconds):
            var response = FixtureResponse.json(status: 429, bytes: NYTErrorBody.rateLimited.body)
            response.headers.append(("Retry-After", String(seconds)))
            return response
        case .serverError: return .json(status: 500, bytes: NYTErrorBody.serverError.body)
        case .unauthorized: return .json(status: 401, bytes: NYTErrorBody.invalidKey.body)
        case .badRequest: return .json(status: 400, bytes: NYTErrorBody.badRequest.body)
        case .htmlForbidden:
            return FixtureResponse(
                status: 403, headers: [("Content-Type", "text/html")], body: NYTErrorBody.forbiddenHTML.body)
        case .dropConnectionMidBody:
            return normal.with(.truncateBody(afterBytes: normal.body.count / 2))
        case .truncatedJSON:
            var response = normal
            response.body = Array(normal.body.prefix(normal.body.count / 2))
            return response
        case .malformedJSON:
            // After the first `,"` past the middle: a member separator (inside a string a quote is
            // always escaped), so the garbage lands between values, never inside text.
            var response = normal
            let body = normal.body
            var cut = body.count / 2
            while cut + 1 < body.count, !(body[cut] == UInt8(ascii: ",") && body[cut + 1] == UInt8(ascii: "\"")) {
                cut += 1
            }
            response.body = Array(body[...min(cut, body.count - 1)]) + Array("@#!".utf8) + Array(body[min(cut + 1, body.count)...])
            return response
        case .stall(let seconds):
            return normal.with(.stallMidBody(afterBytes: min(16, normal.body.count), seconds: seconds))
        }
    }

    // MARK: NYT

    /// The articles a query holds, generated once per query string.
    func corpus(query: String) -> [Article] {
        if let cached = mutable.withLock({ $0.corpora[query] }) { return cached }
        let count = configuration.nytArticlesByQuery[query] ?? configuration.nytArticlesPerQuery
        var generator = ArticleGenerator(seed: configuration.seed ^ Self.fnv1a(query))
        let articles = generator.articles(count: max(0, count))
        mutable.withLock { $0.corpora[query] = articles }
        return articles
    }

    private func answerNYT(_ request: FixtureRequest) -> FixtureResponse {
        if let wanted = configuration.apiKey {
            guard let given = request.queryValue("api-key") else {
                return .json(status: 401, bytes: NYTErrorBody.missingKey.body)
            }
            guard given == wanted else { return .json(status: 401, bytes: NYTErrorBody.invalidKey.body) }
        }
        var begin: NYTDay?
        var end: NYTDay?
        if let text = request.queryValue("begin_date") {
            guard let day = NYTDay(string: text), text.utf8.count == 8 else { return badRequest("Invalid begin_date") }
            begin = day
        }
        if let text = request.queryValue("end_date") {
            guard let day = NYTDay(string: text), text.utf8.count == 8 else { return badRequest("Invalid end_date") }
            end = day
        }
        let pageText = request.queryValue("page") ?? "0"
        guard let page = Int(pageText), page >= 0 else { return badRequest("page must be a number") }
        guard page <= configuration.maxPage else {
            return badRequest("page must be less than or equal to \(configuration.maxPage)")
        }
        let query = request.queryValue("q") ?? ""
        let sort = request.queryValue("sort")
        if let sort, !["newest", "oldest", "relevance"].contains(sort) { return badRequest("Invalid sort: \(sort)") }
        let key = [query, begin.map { "\($0)" } ?? "", end.map { "\($0)" } ?? "", sort ?? ""].joined(separator: "\u{0}")
        let matches = mutable.withLock { $0.lastMatches?.key == key ? $0.lastMatches?.articles : nil }
            ?? matching(query: query, begin: begin, end: end, sort: sort, key: key)
        let start = min(page * 10, matches.count)
        let docs = Array(matches[start..<min(start + 10, matches.count)])
        let hits: Int
        switch configuration.hits {
        case .exact: hits = matches.count
        case .fixed(let number): hits = number
        }
        let line = Self.logLine(request)
        let documents = mutated(docs.map { nytDocument($0, era: configuration.era) }, api: "nyt", request: line) { plan in plan.nyt }
        return .json(bytes: nytPageBody(documents: documents, hits: hits, page: page, era: configuration.era))
    }

    /// The articles of `query` published in `begin...end`, in `sort`'s order; kept as the last
    /// matches under `key`.
    private func matching(query: String, begin: NYTDay?, end: NYTDay?, sort: String?, key: String) -> [Article] {
        var matches = corpus(query: query)
        if begin != nil || end != nil {
            matches = matches.filter { article in
                guard let published = article.publishedAt else { return false }
                let day = NYTDay(date: published)
                return (begin.map { day >= $0 } ?? true) && (end.map { day <= $0 } ?? true)
            }
        }
        switch sort {
        case "newest"?: matches.sort { Self.isBefore($1, $0) }
        case "oldest"?: matches.sort { Self.isBefore($0, $1) }
        default: break
        }
        mutable.withLock { $0.lastMatches = (key, matches) }
        return matches
    }

    /// `documents` with the configured share mutated, each logged with what a client makes of it.
    /// The choice depends only on the seed, the request and the index, so a repeated request gets
    /// the same documents.
    private func mutated(
        _ documents: [FixtureJSON], api: String, request: String, kinds: (DocumentMutationPlan) -> [DocumentMutation]
    ) -> [FixtureJSON] {
        var out: [FixtureJSON] = []
        var log: [ServedDocument] = []
        for (index, document) in documents.enumerated() {
            var mutation: DocumentMutation?
            var result = document
            if let plan = configuration.mutations, !kinds(plan).isEmpty {
                var random = SplitMix64(seed: plan.seed ^ Self.fnv1a(request) ^ UInt64(index) &* 0x9E37_79B9)
                if random.chance(plan.percent) {
                    let kind = random.pick(kinds(plan))
                    mutation = kind
                    result = kind.apply(to: document, random: &random)
                }
            }
            let rejectedAt = mutation?.rejectedAt
            let id = DocumentMutation.storedID(of: result, api: api)
            log.append(ServedDocument(
                api: api, request: request, index: index, mutation: mutation,
                storedID: rejectedAt == nil ? id : nil, rejectedAt: rejectedAt, namedID: rejectedAt == nil ? nil : id))
            out.append(result)
        }
        mutable.withLock { $0.served += log }
        return out
    }

    /// Oldest first, ties broken by id, so every sort is a total order.
    private static func isBefore(_ a: Article, _ b: Article) -> Bool {
        let left = a.publishedAt ?? .distantPast
        let right = b.publishedAt ?? .distantPast
        return left != right ? left < right : a.id < b.id
    }

    /// A 400 `ERROR` body; `message` never contains the key (it is not a parameter we echo).
    private func badRequest(_ message: String) -> FixtureResponse {
        let escaped = message.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return .json(
            status: 400,
            body: #"{"status":"ERROR","copyright":"Copyright (c) 2024 The New York Times Company. All Rights Reserved.","errors":[""#
                + escaped + #""]}"#)
    }

    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return hash
    }

    // MARK: Feedzilla

    /// Category `index` takes `perCategory` consecutive pool articles starting at
    /// `index * perCategory / 2`, so neighbours share half their stories.
    func feedzillaArticles(categoryID: Int, count: Int) -> [Article] {
        guard let index = categories.firstIndex(where: { $0.id == categoryID }) else { return [] }
        let perCategory = max(0, configuration.feedzillaArticlesPerCategory)
        let poolSize = max(1, (categories.count + 1) * perCategory / 2)
        let pool = mutable.withLock { state -> [Article] in
            if let pool = state.feedzillaPool { return pool }
            var generator = ArticleGenerator(seed: configuration.seed ^ 0xFEED_F11A)
            let pool = generator.articles(count: poolSize)
            state.feedzillaPool = pool
            return pool
        }
        let start = index * perCategory / 2
        return (0..<min(perCategory, max(0, count))).map { pool[(start + $0) % pool.count] }
    }

    private func answerFeedzillaCategory(_ request: FixtureRequest, id: Int) -> FixtureResponse {
        guard categories.contains(where: { $0.id == id }) else { return .notFound() }
        let count = request.queryValue("count").flatMap { Int($0) }.map { min(100, max(0, $0)) } ?? 20
        let echo = request.query.filter { $0.0 != "api-key" }.map { "\($0.0)=\($0.1)" }
            + ["category=\(id)", "client_source=api", "format=json"]
        let stories = feedzillaStoryDocuments(
            categoryID: id, articles: feedzillaArticles(categoryID: id, count: count), requestQuery: echo.joined(separator: "&"))
        let documents = mutated(stories, api: "feedzilla", request: Self.logLine(request)) { plan in plan.feedzilla }
        return .json(bytes: feedzillaArticleListBody(categoryID: id, documents: documents))
    }
}
