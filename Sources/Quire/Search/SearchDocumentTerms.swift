internal import QuireLMDB

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
        var start: Int32
        var termEnd: Int32
        var end: Int32
    }

    /// ``sortByTerm()``'s keys and entries in order, kept from document to document.
    private var keys: [UInt64] = []
    private var sorted: [Entry] = []

    init() {}

    /// Empties the list, keeping its storage; `hasGroups` tells whether groups will be given.
    mutating func removeAll(hasGroups: Bool = true) {
        bytes.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
        self.hasGroups = hasGroups
    }

    /// Adds a term and its groups (empty when the list has none). Terms are given in byte
    /// order, or ``sortByTerm()`` puts them in it. A document's text is far below 2 GiB.
    mutating func append(term: UnsafeRawBufferPointer, groups: some Collection<UInt8>) {
        let start = bytes.count
        bytes.append(contentsOf: term)
        let termEnd = bytes.count
        bytes.append(contentsOf: groups)
        entries.append(Entry(start: Int32(start), termEnd: Int32(termEnd), end: Int32(bytes.count)))
    }

    /// Puts the terms in byte order. Each term's first 6 bytes (big-endian) and its place
    /// make one number, and plain numbers sort fast: only terms that share those bytes are
    /// compared whole afterwards (a sort by closure took a seventh of a reload's writer).
    mutating func sortByTerm() {
        guard entries.count > 1 else { return }
        guard entries.count <= 1 << 16 else { return sortByTermSlowly() }
        keys.removeAll(keepingCapacity: true)
        sorted.removeAll(keepingCapacity: true)
        bytes.withUnsafeBytes { bytes in
            for (i, e) in entries.enumerated() {
                let prefix = KeyOrdering.prefix(UnsafeRawBufferPointer(rebasing: bytes[Int(e.start)..<Int(e.termEnd)]))
                keys.append(prefix & ~0xFFFF | UInt64(i))
            }
            keys.sort()
            for key in keys { sorted.append(entries[Int(key & 0xFFFF)]) }
            var i = 0
            while i < keys.count {
                var j = i + 1
                while j < keys.count && keys[j] >> 16 == keys[i] >> 16 { j += 1 }
                if j - i > 1 {
                    sorted[i..<j].sort { a, b in KeyRange.compare(Self.term(a, bytes), Self.term(b, bytes)) < 0 }
                }
                i = j
            }
        }
        swap(&entries, &sorted)
    }

    /// ``sortByTerm()`` of more terms than a key has room to number.
    private mutating func sortByTermSlowly() {
        let order = bytes.withUnsafeBytes { bytes in
            entries.sorted { a, b in KeyRange.compare(Self.term(a, bytes), Self.term(b, bytes)) < 0 }
        }
        entries = order
    }

    private static func term(_ e: Entry, _ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[Int(e.start)..<Int(e.termEnd)])
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
            UnsafeRawBufferPointer(rebasing: bytes[Int(entries[i].start)..<Int(entries[i].termEnd)])
        }

        func groups(_ i: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: bytes[Int(entries[i].termEnd)..<Int(entries[i].end)])
        }
    }
}

/// The terms and groups of a slice of a batch part's documents, each document's in term order,
/// all in two flat arrays (``SearchBatchPart/documentTerms(_:sizes:into:)`` fills them): written
/// document region by document region, a posting at a time, so that the lines being written
/// stay in the cache (an array a document had four lines to keep warm, and missed).
struct SearchDocumentTermSlice {
    fileprivate var bytes: [UInt8] = []
    fileprivate var entries: [SearchDocumentTerms.Entry] = []
    /// Document `d`'s entries are `entries[starts[d]..<starts[d + 1]]`.
    fileprivate var starts: [Int] = []

    init() {}

    /// The number of documents.
    var count: Int { max(0, starts.count - 1) }

    /// Makes room for documents with `entryCounts[d]` terms and `byteCounts[d]` bytes (terms
    /// and groups) each, empty until ``fill(_:)`` fills them in order.
    mutating func reset(entryCounts: ArraySlice<Int>, byteCounts: ArraySlice<Int>) {
        starts.removeAll(keepingCapacity: true)
        starts.append(0)
        var entryTotal = 0
        byteStarts.removeAll(keepingCapacity: true)
        byteStarts.append(0)
        var byteTotal = 0
        for (entryCount, byteCount) in zip(entryCounts, byteCounts) {
            entryTotal += entryCount
            byteTotal += byteCount
            starts.append(entryTotal)
            byteStarts.append(byteTotal)
        }
        entries.removeAll(keepingCapacity: true)
        entries.append(contentsOf: repeatElement(.init(start: 0, termEnd: 0, end: 0), count: entryTotal))
        bytes.removeAll(keepingCapacity: true)
        bytes.append(contentsOf: repeatElement(0, count: byteTotal))
        entryFill = Array(starts.dropLast())
        byteFill = Array(byteStarts.dropLast())
    }

    /// Where each document's next entry and bytes go while the slice is filled.
    private var byteStarts: [Int] = []
    private var entryFill: [Int] = []
    private var byteFill: [Int] = []

    /// Fills the slice: `body` gets an appender that adds a term and its groups to a document,
    /// in the room ``reset(entryCounts:byteCounts:)`` made.
    mutating func fill(_ body: (inout Appender) -> Void) {
        bytes.withUnsafeMutableBytes { bytes in
            entries.withUnsafeMutableBufferPointer { entries in
                entryFill.withUnsafeMutableBufferPointer { entryFill in
                    byteFill.withUnsafeMutableBufferPointer { byteFill in
                        var appender = Appender(bytes: bytes, entries: entries, entryFill: entryFill, byteFill: byteFill)
                        body(&appender)
                    }
                }
            }
        }
    }

    /// Adds postings to the documents of a ``SearchDocumentTermSlice`` being filled.
    struct Appender {
        fileprivate let bytes: UnsafeMutableRawBufferPointer
        fileprivate let entries: UnsafeMutableBufferPointer<SearchDocumentTerms.Entry>
        fileprivate let entryFill: UnsafeMutableBufferPointer<Int>
        fileprivate let byteFill: UnsafeMutableBufferPointer<Int>

        /// Adds `term` and its `groups` to document `d`, after the ones added before.
        mutating func append(_ d: Int, term: UnsafeRawBufferPointer, groups: UnsafeRawBufferPointer) {
            let start = byteFill[d]
            let termEnd = start + term.count
            let end = termEnd + groups.count
            precondition(end <= bytes.count && entryFill[d] < entries.count, "a slice filled past the room it made")
            // A byte loop: terms and groups are a few bytes, shorter than a call to memmove.
            for i in 0..<term.count { bytes[start + i] = term[i] }
            for i in 0..<groups.count { bytes[termEnd + i] = groups[i] }
            entries[entryFill[d]] = .init(start: Int32(start), termEnd: Int32(termEnd), end: Int32(end))
            entryFill[d] += 1
            byteFill[d] = end
        }
    }

    /// Calls `body` with document `d`'s terms, valid only inside it.
    func withDocument<R>(_ d: Int, _ body: (SearchDocumentTerms.View) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { bytes in
            try entries.withUnsafeBufferPointer { entries in
                try body(.init(bytes: bytes, entries: UnsafeBufferPointer(rebasing: entries[starts[d]..<starts[d + 1]])))
            }
        }
    }
}
