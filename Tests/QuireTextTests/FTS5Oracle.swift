import CSQLite
import QuireNews

/// The text fields the oracle indexes, in QuireText field id order (`TextSchema.articles` ids 0, 1,
/// 2, 3 and 5). Keywords (id 4) are left out: FTS5 would need them joined into one column, where a
/// phrase could span two keywords, while QuireText keeps them apart by a position gap.
let oracleColumns: [(name: String, id: UInt8, text: @Sendable (Article) -> String?)] = [
    ("headline", 0, { $0.headline }),
    ("abstract", 1, { $0.abstract }),
    ("snippet", 2, { $0.snippet }),
    ("lead", 3, { $0.leadParagraph }),
    ("byline", 5, { $0.byline }),
]

struct SQLiteError: Error, CustomStringConvertible {
    var description: String
}

/// An in-memory SQLite FTS5 table over articles, tokenized with `unicode61 remove_diacritics 2` (the
/// closest built-in configuration to QuireText's: Unicode letters and numbers are token characters,
/// case folded, Latin diacritics removed). Row ids are the articles' indices.
final class FTS5Oracle {
    private var database: OpaquePointer?
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(articles: [Article]) throws {
        guard sqlite3_open(":memory:", &database) == SQLITE_OK else { throw SQLiteError(description: "open") }
        let columns = oracleColumns.map(\.name).joined(separator: ", ")
        try execute("CREATE VIRTUAL TABLE docs USING fts5(\(columns), section UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')")
        try execute("BEGIN")
        var statement: OpaquePointer?
        let placeholders = Array(repeating: "?", count: oracleColumns.count + 2).joined(separator: ", ")
        try check(sqlite3_prepare_v2(database, "INSERT INTO docs(rowid, \(columns), section) VALUES (\(placeholders))", -1, &statement, nil))
        defer { sqlite3_finalize(statement) }
        for (index, article) in articles.enumerated() {
            sqlite3_bind_int64(statement, 1, Int64(index))
            for (offset, column) in oracleColumns.enumerated() {
                if let text = column.text(article) {
                    sqlite3_bind_text(statement, Int32(offset + 2), text, -1, Self.transient)
                } else {
                    sqlite3_bind_null(statement, Int32(offset + 2))
                }
            }
            sqlite3_bind_text(statement, Int32(oracleColumns.count + 2), article.section ?? "", -1, Self.transient)
            guard sqlite3_step(statement) == SQLITE_DONE else { throw SQLiteError(description: message()) }
            sqlite3_reset(statement)
        }
        try execute("COMMIT")
    }

    deinit { sqlite3_close(database) }

    /// The row ids matching the FTS5 query `match`, and, when given, an exact section.
    func matches(_ match: String, section: String? = nil) throws -> Set<UInt32> {
        var statement: OpaquePointer?
        let sql = "SELECT rowid FROM docs WHERE docs MATCH ?" + (section == nil ? "" : " AND section = ?")
        try check(sqlite3_prepare_v2(database, sql, -1, &statement, nil))
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_text(statement, 1, match, -1, Self.transient)
        if let section { sqlite3_bind_text(statement, 2, section, -1, Self.transient) }
        var out = Set<UInt32>()
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw SQLiteError(description: "\(message()) in \(match)") }
            out.insert(UInt32(sqlite3_column_int64(statement, 0)))
        }
        return out
    }

    /// The terms FTS5 stores for `text` (through an fts5vocab table over a scratch table).
    func tokens(_ text: String) throws -> [String] {
        try execute("DROP TABLE IF EXISTS scratch; DROP TABLE IF EXISTS scratch_v")
        try execute("CREATE VIRTUAL TABLE scratch USING fts5(x, tokenize = 'unicode61 remove_diacritics 2')")
        try execute("CREATE VIRTUAL TABLE scratch_v USING fts5vocab(scratch, instance)")
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v2(database, "INSERT INTO scratch(x) VALUES (?)", -1, &statement, nil))
        sqlite3_bind_text(statement, 1, text, -1, Self.transient)
        _ = sqlite3_step(statement)
        sqlite3_finalize(statement)
        try check(sqlite3_prepare_v2(database, "SELECT term FROM scratch_v ORDER BY offset", -1, &statement, nil))
        defer { sqlite3_finalize(statement) }
        var out: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            out.append(String(cString: sqlite3_column_text(statement, 0)))
        }
        return out
    }

    private func execute(_ sql: String) throws {
        try check(sqlite3_exec(database, sql, nil, nil, nil))
    }

    private func check(_ rc: Int32) throws {
        guard rc == SQLITE_OK else { throw SQLiteError(description: message()) }
    }

    private func message() -> String { String(cString: sqlite3_errmsg(database)) }
}
