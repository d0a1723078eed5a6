import Foundation
internal import QuireLMDB

/// The collection's record index on the full-text index's date field, which date filters and
/// date orders of a search read instead of each match's record.
struct SearchDateIndex {
    let database: Database

    /// Nil when the index has no date field or the collection no date index on it.
    init?(_ dbs: SearchDatabases, _ c: RegisteredCollection) {
        guard let field = dbs.definition.dateField,
            let position = c.definition.indexes.firstIndex(where: { $0.kind == .date && $0.field == field })
        else { return nil }
        database = c.indexes[position]
    }

    /// The index keys of `since...until`, both inclusive, either open.
    static func range(since: Date?, until: Date?) -> KeyRange {
        KeyRange(
            lower: since.map { .inclusive(StoreKey.date($0).bytes) }, upper: until.map { .inclusive(StoreKey.date($0).bytes) })
    }
}

extension StoreReading where Self: ~Copyable {
    /// For a search ordered by date: the matches that can make its page, found by walking the
    /// collection's date index from the newest (or oldest) end, in `since...until`, and keeping
    /// the entries whose document is among `candidates` (ascending numbers) — the first `limit`,
    /// and every later one with the same index key as the last of them (its ties). Ascending;
    /// nil when the walk would cost more than reading each match's date (few matches), when it
    /// took more entries than that would have cost (the matches are dated apart from the newest
    /// ones), or when the index ran out first (undated matches may then make the page).
    ///
    /// A common term matches most of a million articles: reading each one's date from its record
    /// to sort them took 5 s; the walk reads about `limit` entries of the index per share of the
    /// documents the query matches.
    func dateOrderedCandidates(
        _ candidates: [UInt32], newest: Bool, limit: Int, since: Date?, until: Date?,
        _ documents: SearchDocumentEntries, _ c: RegisteredCollection
    ) throws -> [UInt32]? {
        guard candidates.count > limit, let dateIndex = SearchDateIndex(documents.dbs, c) else { return nil }
        // A walk costs an index entry and a document lookup per entry, about limit × documents /
        // matches of them; the dates cost a record read (about five lookups) per match.
        let total = Double(max(documents.state.documents, UInt64(candidates.count)))
        let matches = Double(candidates.count)
        guard Double(limit) * total / matches < matches else { return nil }
        var budget = 5 * candidates.count
        var found: [UInt32] = []
        var boundary: [UInt8]?
        let range = SearchDateIndex.range(since: since, until: until)
        for entry in entries(in: dateIndex.database, range: range, reverse: newest) {
            if let boundary, !entry.key.elementsEqual(boundary) { break }
            budget -= 1
            guard budget > 0 else { return nil }
            guard let number = try documents.entry(of: entry.valueBytes, indexed: true, lmdb)?.number,
                SearchSets.index(of: number, in: candidates) != nil
            else { continue }
            found.append(number)
            if found.count == limit { boundary = entry.keyBytes }
        }
        try checkIntact()
        guard boundary != nil else { return nil }
        return found.sorted()
    }
}
