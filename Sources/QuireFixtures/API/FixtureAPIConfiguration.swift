extension FixtureAPI {
    /// What the fake APIs serve and how they misbehave.
    public struct Configuration: Sendable {
        /// Seeds every generated article; with the query string it fixes a query's results.
        public var seed: UInt64 = 42
        /// How many articles match any NYT query (before `begin_date`/`end_date` filtering).
        public var nytArticlesPerQuery: Int = 120
        /// Overrides of ``nytArticlesPerQuery`` by the exact `q` value.
        public var nytArticlesByQuery: [String: Int] = [:]
        /// The shape of the NYT bodies.
        public var era: NYTEra = .era2019
        /// The highest page served (0-based). The real API documents "up to 100 pages (1,000
        /// results)", so the default serves pages 0…99; a higher page gets a 400 `ERROR` body.
        public var maxPage: Int = 99
        /// What `meta.hits` says.
        public var hits: HitsReporting = .exact
        /// The key the NYT endpoint requires in `api-key`; `nil` accepts any request. A missing or
        /// wrong key gets a 401 fault body, which never repeats the key.
        public var apiKey: String?
        /// How many Feedzilla categories `/v1/categories.json` lists.
        public var feedzillaCategoryCount: Int = 5
        /// How many articles each Feedzilla category holds; neighbouring categories share half of
        /// them, so one story appears in several categories (with a different URL query in each).
        public var feedzillaArticlesPerCategory: Int = 20
        /// Injected faults, checked in order; the first live matching rule fires.
        public var faults: [FixtureAPIFaultRule] = []
        /// Damage to single documents (odd shapes a real API sends), or none.
        public var mutations: DocumentMutationPlan?

        /// The defaults: 120 articles a query, 2019-era bodies, pages 0…99, no key, no faults.
        public init() {}
    }

    /// What the NYT endpoint reports as `meta.hits`.
    public enum HitsReporting: Sendable, Hashable {
        /// The number of matching articles (after date filtering).
        case exact
        /// Always this number, whatever matches (the real API reports millions).
        case fixed(Int)
    }
}
