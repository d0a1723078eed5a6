import Foundation
internal import QuireLMDB

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
        let dbs = documents.dbs
        guard candidates.count > limit, let dateField = dbs.definition.dateField,
            let position = c.definition.indexes.firstIndex(where: { $0.kind == .date && $0.field == dateField })
        else { return nil }
        // A walk costs an index entry and a document lookup per entry, about limit × documents /
        // matches of them; the dates cost a record read (about five lookups) per match.
        let total = Double(max(documents.state.documents, UInt64(candidates.count)))
        let matches = Double(candidates.count)
        guard Double(limit) * total / matches < matches else { return nil }
        var budget = 5 * candidates.count
        let range = KeyRange(
            lower: since.map { .inclusive(StoreKey.date($0).bytes) }, upper: until.map { .inclusive(StoreKey.date($0).bytes) })
        var found: [UInt32] = []
        var boundary: [UInt8]?
        for entry in entries(in: c.indexes[position], range: range, reverse: newest) {
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
