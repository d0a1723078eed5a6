import CSQLite
import Foundation
import Quire
import QuireCodec
import QuireFetch
import QuireFixtures
import QuireNews

/// A JSON Lines file of generated news articles as `quire dump` writes them (members in stored
/// order, dates ISO 8601), in generation order (random ids), under the temporary directory.
/// Written streaming, so `--load-records 1000000` does not hold a million articles in memory.
/// With `revision` above 0, the same articles with their headline edited: what a fetch of
/// articles changed since gives.
final class JSONLinesInput {
    let url: URL
    let count: Int
    let bytes: Int

    init(count: Int, revision: Int = 0) throws {
        self.count = count
        url = FileManager.default.temporaryDirectory.appendingPathComponent("quire-bench-load-\(UUID().uuidString).jsonl")
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw BenchError("cannot create \(url.path)")
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var generator = ArticleGenerator(seed: Corpus.seed)
        var table = FieldTable()
        let encoder = CompactEncoder()
        var buffer: [UInt8] = []
        buffer.reserveCapacity(8 << 20)
        var total = 0
        for index in 0..<count {
            var article = generator.article(index: index)
            if revision > 0 { article.headline = (article.headline ?? "") + " (update \(revision))" }
            let encoded = try encoder.encode(article, fields: &table)
            buffer += try CompactValue.decode(from: encoded, fields: table).jsonBytes()
            buffer.append(10)
            if buffer.count >= 8 << 20 || index == count - 1 {
                try handle.write(contentsOf: buffer)
                total += buffer.count
                buffer.removeAll(keepingCapacity: true)
            }
        }
        bytes = total
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// What a load case loads into: an empty store, or one that holds the same articles already
/// (`again`: the same file a second time; `revised`: the articles with their headline edited).
enum LoadKind {
    case empty, again, revised

    var suffix: String {
        switch self {
        case .empty: ""
        case .again: ".again"
        case .revised: ".revised"
        }
    }

    var group: String { self == .empty ? "load" : "reload" }
}

/// `load.quire.jsonl` (into `NewsSchema.articles`, its indexes and full-text index: what
/// `quire load` writes) and `load.quire.jsonl.indexed` (date and section indexes only): the
/// `ArticleLoader` that `quire load` runs, from the file to a durable store. `.again` and
/// `.revised` load into a store that holds the articles (loaded, untimed, before the sample):
/// every record replaces one, and in `.revised` its postings change.
final class QuireLoadBenchmark: Benchmark {
    let name: String
    let group: String
    let isBaseline = false
    private let count: Int
    private let kind: LoadKind
    private let collection: StoreCollection<Article>
    private var inputs: [JSONLinesInput] = []
    private var scratch: ScratchStore?
    private(set) var note: String?

    init(count: Int, searchable: Bool, kind: LoadKind = .empty) {
        self.count = count
        self.kind = kind
        collection = searchable ? BenchCollections.searchable : BenchCollections.indexed
        name = "load.quire.jsonl" + (searchable ? "" : ".indexed") + kind.suffix
        group = kind.group
    }

    var records: Int { count }
    var bytesPerRecord: Double? { inputs.last.map { Double($0.bytes) / Double($0.count) } }

    func setUp() throws {
        inputs = [try JSONLinesInput(count: count)]
        if kind == .revised { inputs.append(try JSONLinesInput(count: count, revision: 1)) }
    }

    func prepareSample() throws {
        let scratch = try ScratchStore()
        try scratch.store.register(collection)
        self.scratch = scratch
        if kind != .empty { _ = try load(inputs[0], into: scratch.store) }
    }

    func run() throws -> Int {
        guard let store = scratch?.store, let input = inputs.last else { throw BenchError("no store") }
        var loaded: ArticleLoader.Report?
        let before = AnonymousMemory.current()
        let peak = try AnonymousMemory.peak { loaded = try load(input, into: store) }
        guard let report = loaded else { throw BenchError("no load report") }
        note = "\(report.chunks) chunk commits, peak RssAnon \(peak >> 20) MiB (\(before >> 20) MiB before it); bytes/record is the JSON line's"
        return report.records
    }

    private func load(_ input: JSONLinesInput, into store: Store) throws -> ArticleLoader.Report {
        let (collection, path) = (self.collection, input.url.path)
        return try blockingAwait {
            let reader = try LineBlockReader(path: path)
            return try await ArticleLoader().run(from: reader, into: store, collection: collection)
        }
    }

    func finishSample() throws {
        scratch?.close()
        scratch = nil
    }

    func tearDown() { for input in inputs { input.remove() } }
}

/// `load.sqlite.jsonl`, the baseline: what `sqlite3`'s `.import` and an `INSERT … SELECT
/// json_extract(…)` do with the same file, through the system libsqlite3 in this process: each
/// line into a staging table (one transaction, WAL), then into a table keyed by id with the
/// date and section extracted (the indexes `quire load` writes), the document kept whole. `.again`, the
/// baseline of the reload group: the same file imported over the same import done before the
/// sample (untimed), each row replacing its own. `load.sqlite.jsonl.fts5`, not a baseline: the
/// import and, in the same transaction, a contentless FTS5 index over the text `quire load`
/// indexes (the six columns of `insert.sqlite.fts5`), the counterpart of `load.quire.jsonl`.
final class SQLiteLoadBenchmark: Benchmark {
    let name: String
    let group: String
    let isBaseline: Bool
    private let count: Int
    private let kind: LoadKind
    private let fullText: Bool
    private var input: JSONLinesInput?
    private var directory: URL?
    private var database: OpaquePointer?

    init(count: Int, kind: LoadKind = .empty, fullText: Bool = false) {
        self.count = count
        self.kind = kind
        self.fullText = fullText
        isBaseline = !fullText
        name = "load.sqlite.jsonl" + kind.suffix + (fullText ? ".fts5" : "")
        group = kind.group
    }

    var records: Int { count }
    var bytesPerRecord: Double? { input.map { Double($0.bytes) / Double($0.count) } }

    func setUp() throws { input = try JSONLinesInput(count: count) }

    func prepareSample() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("quire-bench-sqlite-load-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
        try check(sqlite3_open(directory.appendingPathComponent("load.sqlite").path, &database), "open")
        try execute("PRAGMA journal_mode=WAL")
        try execute("CREATE TABLE articles (id TEXT PRIMARY KEY, published_at TEXT, section TEXT, doc TEXT)")
        try execute("CREATE INDEX articles_date ON articles(published_at)")
        try execute("CREATE INDEX articles_section ON articles(section)")
        if fullText {
            try execute(
                """
                CREATE VIRTUAL TABLE articles_fts USING fts5(headline, abstract, snippet, lead_paragraph, keywords, byline,
                    content = '', tokenize = 'unicode61 remove_diacritics 2')
                """)
        }
        if kind != .empty { _ = try run() }
    }

    func run() throws -> Int {
        guard let input else { throw BenchError("no input") }
        try execute("CREATE TABLE staging (doc TEXT)")
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v2(database, "INSERT INTO staging VALUES (?)", -1, &statement, nil), "prepare")
        defer { sqlite3_finalize(statement) }
        try execute("BEGIN")
        let reader = try LineBlockReader(path: input.url.path)
        var lines = 0
        while let block = try reader.next(targetBytes: 4 << 20) {
            try block.bytes.withUnsafeBufferPointer { bytes in
                var start = 0
                while start < bytes.count {
                    var end = start
                    while end < bytes.count, bytes[end] != 10 { end += 1 }
                    if end > start {
                        // SQLITE_STATIC (nil): the bytes stay alive until the step below.
                        sqlite3_bind_text(statement, 1, UnsafeRawPointer(bytes.baseAddress! + start).assumingMemoryBound(to: CChar.self), Int32(end - start), nil)
                        guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchError("sqlite step: \(message())") }
                        sqlite3_reset(statement)
                        lines += 1
                    }
                    start = end + 1
                }
            }
        }
        try execute(
            """
            INSERT OR REPLACE INTO articles SELECT json_extract(doc, '$.id'), json_extract(doc, '$.publishedAt'),
                json_extract(doc, '$.section'), doc FROM staging
            """)
        if fullText {
            try execute(
                """
                INSERT INTO articles_fts(rowid, headline, abstract, snippet, lead_paragraph, keywords, byline)
                SELECT rowid, json_extract(doc, '$.headline'), json_extract(doc, '$.abstract'),
                    json_extract(doc, '$.snippet'), json_extract(doc, '$.leadParagraph'),
                    (SELECT group_concat(json_extract(value, '$.value'), ' ') FROM json_each(doc, '$.keywords')),
                    json_extract(doc, '$.byline')
                FROM articles
                """)
        }
        try execute("DROP TABLE staging")
        try execute("COMMIT")
        return lines
    }

    func finishSample() throws {
        sqlite3_close(database)
        database = nil
        if let directory { try? FileManager.default.removeItem(at: directory) }
        directory = nil
    }

    func tearDown() { input?.remove() }

    private func execute(_ sql: String) throws { try check(sqlite3_exec(database, sql, nil, nil, nil), sql) }

    private func message() -> String { String(cString: sqlite3_errmsg(database)) }

    private func check(_ rc: Int32, _ operation: String) throws {
        guard rc == SQLITE_OK else { throw BenchError("sqlite \(operation): \(message())") }
    }
}
