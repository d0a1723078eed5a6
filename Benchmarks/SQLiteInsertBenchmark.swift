import CSQLite
import Foundation

/// `insert.sqlite.sorted` / `.random`: the system libsqlite3 as a GRDB user would have it: WAL,
/// one transaction, a prepared INSERT into a table with `id TEXT PRIMARY KEY` and the article's
/// columns (keywords as one JSON text column). A fresh database file each sample.
final class SQLiteInsertBenchmark: Benchmark {
    let name: String
    let group: String
    let isBaseline = false
    private let corpus: Corpus
    private let sorted: Bool
    private var order: [Int] = []
    private var keywordsJSON: [String] = []
    private var directory: URL?
    private var database: OpaquePointer?
    private var fileBytes: Double?

    /// SQLite copies bound text at bind time when given this destructor (`SQLITE_TRANSIENT`).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(corpus: Corpus, sorted: Bool) {
        self.corpus = corpus
        self.sorted = sorted
        name = sorted ? "insert.sqlite.sorted" : "insert.sqlite.random"
        group = sorted ? "insert.sorted" : "insert.random"
    }

    var records: Int { corpus.count }
    /// The database file's size over the record count (rows plus the primary key index).
    var bytesPerRecord: Double? { fileBytes }

    func setUp() throws {
        order = sorted ? corpus.sortedOrder : Array(corpus.keys.indices)
        let encoder = JSONEncoder()
        keywordsJSON = try corpus.articles.map { String(decoding: try encoder.encode($0.keywords), as: UTF8.self) }
    }

    func prepareSample() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("quire-bench-sqlite-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
        try sqliteCheck(sqlite3_open(directory.appendingPathComponent("articles.sqlite").path, &database), "open")
        try execute("PRAGMA journal_mode=WAL")
        try execute(
            """
            CREATE TABLE articles (
                id TEXT PRIMARY KEY, web_url TEXT NOT NULL, headline TEXT NOT NULL, kicker TEXT, abstract TEXT,
                snippet TEXT NOT NULL, lead_paragraph TEXT, source TEXT NOT NULL, section_name TEXT NOT NULL,
                subsection_name TEXT, byline TEXT, document_type TEXT NOT NULL, news_desk TEXT NOT NULL,
                type_of_material TEXT NOT NULL, pub_date REAL NOT NULL, word_count INTEGER NOT NULL,
                keywords TEXT NOT NULL)
            """)
    }

    func run() throws -> Int {
        var statement: OpaquePointer?
        try sqliteCheck(
            sqlite3_prepare_v2(
                database, "INSERT INTO articles VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &statement, nil),
            "prepare")
        defer { sqlite3_finalize(statement) }
        try execute("BEGIN")
        for index in order {
            let article = corpus.articles[index]
            let texts: [String?] = [
                article.id, article.webURL, article.headline, article.kicker, article.abstract, article.snippet,
                article.leadParagraph, article.source, article.section, article.subsection, article.byline,
                article.documentType, article.newsDesk, article.typeOfMaterial,
            ]
            for (position, text) in texts.enumerated() {
                if let text {
                    sqlite3_bind_text(statement, Int32(position + 1), text, -1, Self.transient)
                } else {
                    sqlite3_bind_null(statement, Int32(position + 1))
                }
            }
            sqlite3_bind_double(statement, 15, article.publishedAt.timeIntervalSince1970)
            sqlite3_bind_int64(statement, 16, Int64(article.wordCount))
            sqlite3_bind_text(statement, 17, keywordsJSON[index], -1, Self.transient)
            guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchError("sqlite step: \(message())") }
            sqlite3_reset(statement)
        }
        try execute("COMMIT")
        return order.count
    }

    func finishSample() throws {
        try execute("PRAGMA wal_checkpoint(TRUNCATE)")
        if let directory {
            let path = directory.appendingPathComponent("articles.sqlite").path
            let attributes = try? FileManager.default.attributesOfItem(atPath: path)
            let size = (attributes?[.size] as? Int) ?? 0
            fileBytes = Double(size) / Double(max(1, order.count))
        }
        sqlite3_close(database)
        database = nil
        if let directory { try? FileManager.default.removeItem(at: directory) }
        directory = nil
    }

    private func execute(_ sql: String) throws {
        try sqliteCheck(sqlite3_exec(database, sql, nil, nil, nil), sql)
    }

    private func message() -> String { String(cString: sqlite3_errmsg(database)) }

    private func sqliteCheck(_ rc: Int32, _ operation: String) throws {
        guard rc == SQLITE_OK else { throw BenchError("sqlite \(operation): \(message())") }
    }
}
