import CSQLite
import Foundation
import QuireNews

/// `insert.sqlite.sorted` / `.random`: the system libsqlite3 as a GRDB user would have it: WAL,
/// one transaction, a prepared INSERT into a table with `id TEXT PRIMARY KEY` and the article's
/// columns (authors, keywords and images as JSON text columns, encoded before the timed run,
/// which favours SQLite). A fresh database file each sample.
final class SQLiteInsertBenchmark: Benchmark {
    let name: String
    let group: String
    private let corpus: Corpus
    private let sorted: Bool
    /// The articles in insertion order (`Corpus.sortedArticles` when sorted).
    private var articles: [Article] = []
    /// Per article: the authors, keywords and multimedia as JSON text (nil when absent).
    private var nestedJSON: [[String?]] = []
    private var directory: URL?
    private var database: OpaquePointer?
    private var fileBytes: Double?

    /// SQLite copies bound text at bind time when given this destructor (`SQLITE_TRANSIENT`).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// With `fullText`, the same rows also go into an FTS5 table over the searchable text
    /// (`unicode61 remove_diacritics 2`, the tokenizer QuireText matches): `insert.sqlite.fts5`.
    private let fullText: Bool

    init(corpus: Corpus, sorted: Bool, fullText: Bool = false) {
        self.corpus = corpus
        self.sorted = sorted
        self.fullText = fullText
        name = fullText ? "insert.sqlite.fts5" : sorted ? "insert.sqlite.sorted" : "insert.sqlite.random"
        group = fullText ? "insert.search" : sorted ? "insert.sorted" : "insert.random"
    }

    var isBaseline: Bool { fullText }

    var records: Int { corpus.count }
    /// The database file's size over the record count (rows plus the primary key index); with
    /// `fullText`, the FTS5 index's bytes per record (its `_data`, `_idx`, `_docsize` and
    /// `_config` tables, by `dbstat`), what compares with Quire's full-text index; the file
    /// and FTS5's copy of the text (`_content`) are in the note.
    var bytesPerRecord: Double? { fullText ? indexBytes : fileBytes }
    private var indexBytes: Double?
    private(set) var note: String?

    func setUp() throws {
        articles = sorted ? corpus.sortedArticles : corpus.articles
        let encoder = JSONEncoder()
        func text<T: Encodable>(_ value: T?) throws -> String? {
            try value.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
        }
        nestedJSON = try articles.map { [try text($0.authors), try text($0.keywords), try text($0.multimedia)] }
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
                id TEXT PRIMARY KEY, url TEXT NOT NULL, headline TEXT, kicker TEXT, abstract TEXT, snippet TEXT,
                lead_paragraph TEXT, source TEXT, source_url TEXT, section TEXT, subsection TEXT, news_desk TEXT,
                print_section TEXT, print_page TEXT, document_type TEXT, type_of_material TEXT, byline TEXT,
                published_at REAL, word_count INTEGER, authors TEXT, keywords TEXT, multimedia TEXT)
            """)
        if fullText {
            try execute(
                """
                CREATE VIRTUAL TABLE articles_fts USING fts5(headline, abstract, snippet, lead_paragraph, keywords, byline,
                    tokenize = 'unicode61 remove_diacritics 2')
                """)
        }
    }

    func run() throws -> Int {
        var statement: OpaquePointer?
        try sqliteCheck(
            sqlite3_prepare_v2(
                database, "INSERT INTO articles VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &statement, nil),
            "prepare")
        defer { sqlite3_finalize(statement) }
        var fts: OpaquePointer?
        if fullText {
            try sqliteCheck(
                sqlite3_prepare_v2(database, "INSERT INTO articles_fts(rowid, headline, abstract, snippet, lead_paragraph, keywords, byline) VALUES (last_insert_rowid(),?,?,?,?,?,?)", -1, &fts, nil),
                "prepare fts")
        }
        defer { sqlite3_finalize(fts) }
        try execute("BEGIN")
        for index in articles.indices {
            let article = articles[index]
            let texts: [String?] = [
                article.id, article.url, article.headline, article.kicker, article.abstract, article.snippet,
                article.leadParagraph, article.source, article.sourceURL, article.section, article.subsection,
                article.newsDesk, article.printSection, article.printPage, article.documentType,
                article.typeOfMaterial, article.byline,
            ]
            bindTexts(statement, texts, from: 1)
            if let date = article.publishedAt {
                sqlite3_bind_double(statement, 18, date.timeIntervalSince1970)
            } else {
                sqlite3_bind_null(statement, 18)
            }
            if let words = article.wordCount {
                sqlite3_bind_int64(statement, 19, Int64(words))
            } else {
                sqlite3_bind_null(statement, 19)
            }
            bindTexts(statement, nestedJSON[index], from: 20)
            guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchError("sqlite step: \(message())") }
            sqlite3_reset(statement)
            if let fts {
                let keywords = article.keywords.map { $0.map(\.value).joined(separator: " ") }
                bindTexts(fts, [article.headline, article.abstract, article.snippet, article.leadParagraph, keywords, article.byline], from: 1)
                guard sqlite3_step(fts) == SQLITE_DONE else { throw BenchError("sqlite fts step: \(message())") }
                sqlite3_reset(fts)
            }
        }
        try execute("COMMIT")
        return articles.count
    }

    func finishSample() throws {
        try execute("PRAGMA wal_checkpoint(TRUNCATE)")
        if fullText, indexBytes == nil { try measureFullTextIndex() }
        if let directory {
            let path = directory.appendingPathComponent("articles.sqlite").path
            let attributes = try? FileManager.default.attributesOfItem(atPath: path)
            let size = (attributes?[.size] as? Int) ?? 0
            fileBytes = Double(size) / Double(max(1, articles.count))
        }
        sqlite3_close(database)
        database = nil
        if let directory { try? FileManager.default.removeItem(at: directory) }
        directory = nil
    }

    /// Reads the FTS5 tables' sizes from `dbstat` (Debian's libsqlite3 has it).
    private func measureFullTextIndex() throws {
        var statement: OpaquePointer?
        try sqliteCheck(
            sqlite3_prepare_v2(
                database, "SELECT name, SUM(pgsize) FROM dbstat WHERE name LIKE 'articles_fts_%' GROUP BY name ORDER BY name",
                -1, &statement, nil), "prepare dbstat")
        defer { sqlite3_finalize(statement) }
        var sizes: [(String, Double)] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            let name = String(cString: sqlite3_column_text(statement, 0))
            sizes.append((name, Double(sqlite3_column_int64(statement, 1)) / Double(max(1, articles.count))))
        }
        indexBytes = sizes.filter { !$0.0.hasSuffix("_content") }.reduce(0) { $0 + $1.1 }
        let file = (try? FileManager.default.attributesOfItem(atPath: directory?.appendingPathComponent("articles.sqlite").path ?? ""))?[.size] as? Int ?? 0
        note = "B/record: " + sizes.map { "\($0.0) \(Report.fixed($0.1, 0))" }.joined(separator: ", ")
            + "; whole file \(Report.fixed(Double(file) / Double(max(1, articles.count)), 0))"
    }

    /// Binds `texts` to consecutive parameters starting at `first` (nil binds NULL).
    private func bindTexts(_ statement: OpaquePointer?, _ texts: [String?], from first: Int32) {
        for (position, text) in texts.enumerated() {
            if let text {
                sqlite3_bind_text(statement, first + Int32(position), text, -1, Self.transient)
            } else {
                sqlite3_bind_null(statement, first + Int32(position))
            }
        }
    }

    private func execute(_ sql: String) throws {
        try sqliteCheck(sqlite3_exec(database, sql, nil, nil, nil), sql)
    }

    private func message() -> String { String(cString: sqlite3_errmsg(database)) }

    private func sqliteCheck(_ rc: Int32, _ operation: String) throws {
        guard rc == SQLITE_OK else { throw BenchError("sqlite \(operation): \(message())") }
    }
}
