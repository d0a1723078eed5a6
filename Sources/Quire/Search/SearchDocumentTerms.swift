/// One document's distinct terms, each with its occurrence groups (``SearchOccurrences``), in
/// term byte order: what re-indexing a document compares, the text it was indexed with against
/// its new one. Two flat arrays, kept from document to document, so that once they have grown
/// a document costs no allocation (as `[[UInt8]]` lists, each term and group was an array of
/// its own, and sorting them went through generic comparisons: a third of a reload's writer).
struct SearchDocumentTerms {
    /// Each term's bytes followed by its groups' bytes.
    private var bytes: [UInt8] = []
    /// Per term: where its bytes start in `bytes`, where they end (its groups start) and where
    /// its groups end.
    private var entries: [Entry] = []
    /// False for a document whose stored entry listed its terms only (the oldest indexes): its
    /// groups are unknown, and every term is empty of them.
    private(set) var hasGroups = true

    fileprivate struct Entry {
        var start: Int
        var termEnd: Int
        var end: Int
    }

    init() {}

    var count: Int { entries.count }

    /// Empties the list, keeping its storage; `hasGroups` tells whether groups will be given.
    mutating func removeAll(hasGroups: Bool = true) {
        bytes.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
        self.hasGroups = hasGroups
    }

    /// Adds a term and its groups (empty when the list has none). Terms are given in byte
    /// order, or ``sortByTerm()`` puts them in it.
    mutating func append(term: some Collection<UInt8>, groups: some Collection<UInt8>) {
        let start = bytes.count
        bytes.append(contentsOf: term)
        let termEnd = bytes.count
        bytes.append(contentsOf: groups)
        entries.append(Entry(start: start, termEnd: termEnd, end: bytes.count))
    }

    /// Puts the terms in byte order. Most terms differ in their first 8 bytes: those are
    /// compared as one number, whole terms only on a tie.
    mutating func sortByTerm() {
        guard entries.count > 1 else { return }
        let sorted = bytes.withUnsafeBytes { bytes in
            func term(_ e: Entry) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[e.start..<e.termEnd]) }
            var keyed = entries.map { (prefix: KeyOrdering.prefix(term($0)), entry: $0) }
            keyed.sort { a, b in
                a.prefix != b.prefix ? a.prefix < b.prefix : TermBlockMerger.compare(term(a.entry), term(b.entry)) < 0
            }
            return keyed.map(\.entry)
        }
        entries = sorted
    }

    /// Calls `body` with a view of the list valid only inside it.
    func withTerms<R>(_ body: (View) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { bytes in
            try entries.withUnsafeBufferPointer { entries in try body(View(bytes: bytes, entries: entries)) }
        }
    }

    /// The terms and groups of a ``SearchDocumentTerms``, read in place.
    struct View {
        fileprivate let bytes: UnsafeRawBufferPointer
        fileprivate let entries: UnsafeBufferPointer<Entry>

        var count: Int { entries.count }

        func term(_ i: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: bytes[entries[i].start..<entries[i].termEnd])
        }

        func groups(_ i: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: bytes[entries[i].termEnd..<entries[i].end])
        }
    }
}
