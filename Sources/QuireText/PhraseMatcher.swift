/// Finds a phrase in one document from the occurrences of its terms.
public enum PhraseMatcher {
    /// Calls `body` with the start of each occurrence of the phrase: a field in `fields` and a
    /// position p where term i of the phrase occurs at p + i in the same field, for every i.
    ///
    /// `lists[i]` are the occurrences of the phrase's term i in the document, sorted by field then
    /// position (as ``PostingCursor/forEachOccurrence(_:)`` gives them; for a last term that is a
    /// prefix, the sorted union of the expanded terms' occurrences). Linear in the total count.
    public static func forEachMatch(
        _ lists: [UnsafeBufferPointer<Occurrence>], fields: FieldSet = .all,
        _ body: (Occurrence) -> Void
    ) {
        guard let first = lists.first else { return }
        let count = lists.count
        if count == 2 {
            // Most phrases are two words: one cursor, no allocation.
            let second = lists[1]
            var c = 0
            for start in first where fields.allows(start.field) {
                guard start.position < UInt32.max else { return }
                let target = Occurrence(field: start.field, position: start.position + 1).order
                while c < second.count, second[c].order < target { c += 1 }
                if c == second.count { return }
                if second[c].order == target { body(start) }
            }
            return
        }
        // One monotone cursor per later list: the targets (field, p + i) ascend with the start.
        withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { cursors in
            cursors.initialize(repeating: 0)
            starts: for start in first where fields.allows(start.field) {
                var i = 1
                while i < count {
                    let list = lists[i]
                    let (position, overflow) = start.position.addingReportingOverflow(UInt32(i))
                    if overflow { break starts }
                    let target = Occurrence(field: start.field, position: position)
                    var c = cursors[i]
                    while c < list.count, list[c] < target { c += 1 }
                    cursors[i] = c
                    if c == list.count { break starts }  // no later start can match either
                    if list[c] != target { continue starts }
                    i += 1
                }
                body(start)
            }
        }
    }

    /// The number of occurrences of the phrase per field id (`counts[f]`, grown as needed), for BM25.
    public static func frequencies(
        _ lists: [UnsafeBufferPointer<Occurrence>], fields: FieldSet = .all,
        into counts: inout [UInt32]
    ) {
        forEachMatch(lists, fields: fields) { start in
            let f = Int(start.field)
            if counts.count <= f { counts.append(contentsOf: repeatElement(0, count: f + 1 - counts.count)) }
            counts[f] += 1
        }
    }
}
