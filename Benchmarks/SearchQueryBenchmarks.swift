import CSQLite
import Foundation
import Quire
import QuireNews

/// The kinds of query the search cases time, each with `limit 20` ranked by BM25.
enum SearchQueryClass: String, CaseIterable {
    /// One word.
    case term
    /// Two words of one article (AND).
    case and
    /// Two words, either (OR).
    case or
    /// Two consecutive words of one article.
    case phrase
    /// The first three or four letters of a word.
    case prefix
}

/// The same articles in a Quire store (`NewsSchema.articles`, full-text index) and in an SQLite
/// FTS5 table (`unicode61 remove_diacritics 2`, the columns `insert.sqlite.fts5` fills), built
/// once for all the search cases, and the generated queries of each class.
final class SearchFixture: @unchecked Sendable {
    // @unchecked: built in `init` on the main thread; afterwards only read (each thread opens
    // its own SQLite connection).
    let scratch: ScratchStore
    let sqliteDirectory: URL
    let sqlitePath: String
    /// Per class, the queries in Quire's syntax and in FTS5's.
    let queries: [SearchQueryClass: [(quire: String, fts5: String)]]

    static let queryCount = 200

    init(corpus: Corpus) throws {
        scratch = try ScratchStore()
        let (store, collection, articles) = (scratch.store, BenchCollections.searchable, corpus.sortedArticles)
        try store.register(collection)
        _ = try blockingAwait {
            try await store.bulkInsert(articles, into: collection, options: BulkInsertOptions(relaxedDurability: true))
        }
        sqliteDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("quire-bench-fts5-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: sqliteDirectory, withIntermediateDirectories: true)
        sqlitePath = sqliteDirectory.appendingPathComponent("fts.sqlite").path
        try Self.buildFTS5(at: sqlitePath, articles)
        queries = Self.generateQueries(articles)
    }

    func close() {
        scratch.close()
        try? FileManager.default.removeItem(at: sqliteDirectory)
    }

    /// The searchable text of an article, in FTS5's columns (keywords joined with spaces).
    static func columns(_ a: Article) -> [String?] {
        [a.headline, a.abstract, a.snippet, a.leadParagraph, a.keywords.map { $0.map(\.value).joined(separator: " ") }, a.byline]
    }

    private static func buildFTS5(at path: String, _ articles: [Article]) throws {
        let db = try SQLiteConnection(path: path, readOnly: false)
        try db.execute("PRAGMA journal_mode=WAL")
        try db.execute(
            """
            CREATE VIRTUAL TABLE articles_fts USING fts5(headline, abstract, snippet, lead_paragraph, keywords, byline,
                tokenize = 'unicode61 remove_diacritics 2')
            """)
        try db.execute("BEGIN")
        let insert = try db.prepare(
            "INSERT INTO articles_fts(rowid, headline, abstract, snippet, lead_paragraph, keywords, byline) VALUES (?,?,?,?,?,?,?)")
        defer { sqlite3_finalize(insert) }
        for (index, article) in articles.enumerated() {
            sqlite3_bind_int64(insert, 1, Int64(index))
            for (offset, text) in columns(article).enumerated() {
                if let text {
                    sqlite3_bind_text(insert, Int32(offset + 2), text, -1, SQLiteConnection.transient)
                } else {
                    sqlite3_bind_null(insert, Int32(offset + 2))
                }
            }
            guard sqlite3_step(insert) == SQLITE_DONE else { throw BenchError("fts5 insert: \(db.message)") }
            sqlite3_reset(insert)
        }
        try db.execute("COMMIT")
        try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// Lower-case ASCII words of at least three letters (the same token in both tokenizers),
    /// and the runs of two such words in a row.
    private static func words(_ text: String) -> [[String]] {
        var runs: [[String]] = []
        var run: [String] = []
        for raw in text.split(separator: " ") {
            let word = raw.lowercased()
            if word.count >= 3, word.unicodeScalars.allSatisfy({ $0.value >= 0x61 && $0.value <= 0x7A }) {
                run.append(word)
            } else {
                if !run.isEmpty { runs.append(run) }
                run = []
            }
        }
        if !run.isEmpty { runs.append(run) }
        return runs
    }

    /// Queries whose words come from the articles' abstracts and headlines (so frequent words
    /// are frequent in the queries too, as in a real log), seeded: the same every run.
    private static func generateQueries(_ articles: [Article]) -> [SearchQueryClass: [(quire: String, fts5: String)]] {
        var rng = SplitMix(seed: 2026)
        var out: [SearchQueryClass: [(quire: String, fts5: String)]] = [:]
        for kind in SearchQueryClass.allCases {
            var list: [(quire: String, fts5: String)] = []
            while list.count < queryCount {
                let article = articles[rng.below(articles.count)]
                let runs = words((article.headline ?? "") + " . " + (article.abstract ?? ""))
                let all = runs.flatMap { $0 }
                guard all.count >= 2 else { continue }
                let a = all[rng.below(all.count)]
                let b = all[rng.below(all.count)]
                switch kind {
                case .term: list.append((a, "\"\(a)\""))
                case .and:
                    guard a != b else { continue }
                    list.append(("\(a) \(b)", "\"\(a)\" AND \"\(b)\""))
                case .or:
                    guard a != b else { continue }
                    list.append(("\(a) OR \(b)", "\"\(a)\" OR \"\(b)\""))
                case .phrase:
                    guard let run = runs.filter({ $0.count >= 2 }).randomElement(using: &rng) else { continue }
                    let start = rng.below(run.count - 1)
                    let phrase = "\(run[start]) \(run[start + 1])"
                    list.append(("\"\(phrase)\"", "\"\(phrase)\""))
                case .prefix:
                    guard a.count >= 5 else { continue }
                    let p = String(a.prefix(3 + rng.below(2)))
                    list.append(("\(p)*", "\"\(p)\" *"))
                }
            }
            out[kind] = list
        }
        return out
    }
}

/// `search.quire.<class>.<T>t` / `search.fts5.<class>.<T>t`: T threads each run every generated
/// query of one class with `limit 20`, ranked by BM25 (Quire: `snapshot.search`, one snapshot a
/// query; FTS5: `MATCH … ORDER BY rank LIMIT 20` through a prepared statement on the thread's own
/// read-only connection), over the run's articles. Records/s is queries/s. The group's baseline is
/// FTS5 on one thread.
final class SearchQueryBenchmark: Benchmark {
    let kind: SearchQueryClass
    let threads: Int
    let fts5: Bool
    private let corpus: Corpus
    private var fixture: SearchFixture?
    private var hitCount = 0
    private(set) var note: String?

    init(corpus: Corpus, kind: SearchQueryClass, threads: Int, fts5: Bool) {
        self.corpus = corpus
        self.kind = kind
        self.threads = threads
        self.fts5 = fts5
    }

    var name: String { "search.\(fts5 ? "fts5" : "quire").\(kind.rawValue).\(threads)t" }
    var group: String { "search.\(kind.rawValue)" }
    var isBaseline: Bool { fts5 && threads == 1 }
    var records: Int { SearchFixture.queryCount * threads }
    var bytesPerRecord: Double? { nil }

    func setUp() throws { fixture = try corpus.searchFixture() }

    func run() throws -> Int {
        guard let fixture, let queries = fixture.queries[kind] else { throw BenchError("not set up") }
        let total: Int
        if fts5 {
            let path = fixture.sqlitePath
            total = try onThreads(threads) { _ in
                let db = try SQLiteConnection(path: path, readOnly: true)
                let statement = try db.prepare("SELECT rowid FROM articles_fts WHERE articles_fts MATCH ? ORDER BY rank LIMIT 20")
                defer { sqlite3_finalize(statement) }
                var hits = 0
                for query in queries {
                    sqlite3_bind_text(statement, 1, query.fts5, -1, SQLiteConnection.transient)
                    while true {
                        let rc = sqlite3_step(statement)
                        if rc == SQLITE_DONE { break }
                        guard rc == SQLITE_ROW else { throw BenchError("fts5 query \(query.fts5): \(db.message)") }
                        hits += 1
                    }
                    sqlite3_reset(statement)
                }
                return hits
            }
        } else {
            let store = fixture.scratch.store
            let collection = BenchCollections.searchable
            total = try onThreads(threads) { _ in
                var hits = 0
                for query in queries {
                    hits += try store.read { try $0.search(query.quire, in: collection, limit: 20).count }
                }
                return hits
            }
        }
        hitCount = total
        note = "\(queries.count) queries a thread, \(Report.fixed(Double(total) / Double(records), 1)) hits a query"
        return total
    }
}

extension Corpus {
    /// The search cases' shared store and FTS5 database, built on first use.
    func searchFixture() throws -> SearchFixture {
        if let searchFixtureStorage { return searchFixtureStorage }
        let fixture = try SearchFixture(corpus: self)
        searchFixtureStorage = fixture
        return fixture
    }
}

/// One SQLite connection (the search cases open one a thread).
final class SQLiteConnection {
    private var handle: OpaquePointer?
    /// SQLite copies bound text at bind time when given this destructor (`SQLITE_TRANSIENT`).
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(path: String, readOnly: Bool) throws {
        let flags = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        guard sqlite3_open_v2(path, &handle, flags | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            throw BenchError("sqlite open \(path): \(message)")
        }
        // Two threads opening one WAL database at once may meet a lock for a moment.
        sqlite3_busy_timeout(handle, 10_000)
    }

    deinit { sqlite3_close(handle) }

    var message: String { handle.map { String(cString: sqlite3_errmsg($0)) } ?? "no connection" }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw BenchError("sqlite \(sql): \(message)") }
    }

    func prepare(_ sql: String) throws -> OpaquePointer? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else {
            throw BenchError("sqlite prepare \(sql): \(message)")
        }
        return statement
    }
}

/// A seeded generator (SplitMix64), so the queries are the same on every run.
struct SplitMix: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { n <= 0 ? 0 : Int(next() % UInt64(n)) }
}
