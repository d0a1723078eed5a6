import Dispatch
internal import QuireLMDB
import Foundation
import QuireText
import Synchronization

/// The tokenized text of a contiguous range of a batch's documents, grouped by term for a bulk
/// build: per document its field lengths; per term, in byte order, its postings in document order
/// (``documentTerms(_:sizes:into:)`` regroups them by document for records already indexed).
///
/// Built off the writer's own work: a batch is cut in as many parts as there are cores (two on
/// the machines we measure) and each part is analysed on its own thread with its own term table.
final class SearchBatchPart: Sendable {
    let range: Range<Int>
    /// The tokenizer rules it was analysed with (the index's when it was read; a writer finding
    /// the index's rules differ tokenizes the batch again).
    let rules: TokenizerOptions
    /// 16 field lengths per document.
    let lengths: [UInt32]
    /// Each document's check (its postings' digest and its text's checksum).
    let checks: [SearchDocumentCheck]
    /// The distinct terms in byte order: term `k`'s bytes are `terms[termEnds[k - 1]..<termEnds[k]]`
    /// (from 0 for the first).
    let terms: [UInt8]
    let termEnds: [Int]
    /// The postings in term order (then document order), what the writer appends term by
    /// term: term `k`'s are the slots `termStarts[k]..<termStarts[k + 1]`; slot `s` is document
    /// `termDocuments[s]` (its index in the part) with the occurrence groups
    /// (``SearchOccurrences``) `termGroups[termGroupEnds[s - 1]..<termGroupEnds[s]]` (from 0 for
    /// the first). Built on the analysing thread, so that the writer reads each term's postings
    /// front to back: gathered from document-ordered arrays, every posting was a cache miss on the writer.
    let termStarts: [Int]
    let termDocuments: [Int32]
    let termGroupEnds: [Int32]
    let termGroups: [UInt8]
    /// Where the arrays go back when the part is gone (the load's pool), nil for a part that
    /// shares its arrays with another.
    private let buffers: SearchAnalysisBuffers?

    struct Posting: Sendable {
        /// The term's id in the part's table, then its rank in byte order (its `k`).
        var term: UInt32
        /// The document's index in the part.
        var document: Int32
        var start: Int32
        var end: Int32
    }

    /// Tokenizes the documents of `range` (`texts(i)` for each `i`) and groups their postings by
    /// term, in arrays taken from `buffers` (given back when the part is gone).
    init(range: Range<Int>, buffers: SearchAnalysisBuffers?, rules: TokenizerOptions, _ texts: (Int) -> [SearchText]) {
        self.range = range
        self.buffers = buffers
        self.rules = rules
        var table = TermTable(capacity: 1 << 16)
        var tokenizer = Tokenizer(options: rules)
        var buffer = TokenBuffer()
        var scratch = buffers?.takeScratch() ?? SearchAnalysisBuffers.Scratch()
        var output = buffers?.takeOutput() ?? SearchAnalysisBuffers.Output()
        // The arrays the loop appends to, as locals (moved back below).
        var lengths = [UInt32]()
        var groups = [UInt8]()
        var postings = [Posting]()
        swap(&lengths, &output.lengths)
        swap(&groups, &scratch.groups)
        swap(&postings, &scratch.postings)
        lengths.reserveCapacity(range.count * 16)
        var next = [UInt32](repeating: 0, count: 16)
        var used = [Bool](repeating: false, count: 16)
        var fieldLengths = [UInt32](repeating: 0, count: 16)
        var checks = [SearchDocumentCheck]()
        checks.reserveCapacity(range.count)
        var termHashes = [UInt64]()  // by term id: each distinct term hashed once a part
        for i in range {
            buffer.removeAll()
            for f in 0..<16 {
                next[f] = 0
                used[f] = false
            }
            let pieces = texts(i)
            for piece in pieces {
                let f = Int(piece.field & 15)
                let start = used[f] ? next[f] + SearchAnalyzer.valueGap : 0
                next[f] = tokenizer.tokenize(piece.text, field: piece.field & 15, startingAt: start, into: &buffer)
                used[f] = true
            }
            buffer.fieldLengths(into: &fieldLengths)
            lengths.append(contentsOf: fieldLengths)
            let document = Int32(i - range.lowerBound)
            var digest = SearchPostingDigest()
            buffer.forEachTerm(interning: &table) { id, term, occurrences in
                let start = Int32(groups.count)
                SearchOccurrences.encode(occurrences, into: &groups)
                postings.append(Posting(term: id, document: document, start: start, end: Int32(groups.count)))
                if Int(id) == termHashes.count { termHashes.append(SearchPostingDigest.hash(UnsafeRawBufferPointer(term))) }
                groups.withUnsafeBytes { bytes in
                    digest.add(termHash: termHashes[Int(id)], groups: UnsafeRawBufferPointer(rebasing: bytes[Int(start)...]))
                }
            }
            checks.append(SearchDocumentCheck(digest, texts: pieces))
        }
        swap(&lengths, &output.lengths)
        swap(&groups, &scratch.groups)
        swap(&postings, &scratch.postings)
        // The terms in byte order, copied flat (sorting through the table's closures costs more).
        var flat: [UInt8] = []
        var flatEnds: [Int] = []
        flat.reserveCapacity(table.byteCount)
        flatEnds.reserveCapacity(table.count)
        for id in 0..<UInt32(table.count) {
            table.withTerm(id) { flat.append(contentsOf: $0) }
            flatEnds.append(flat.count)
        }
        let order = Self.byteOrder(flat, ends: flatEnds)
        var rank = [UInt32](repeating: 0, count: order.count)
        var terms: [UInt8] = []
        var termEnds: [Int] = []
        terms.reserveCapacity(flat.count)
        termEnds.reserveCapacity(order.count)
        for (k, id) in order.enumerated() {
            let i = Int(id)
            rank[i] = UInt32(k)
            terms.append(contentsOf: flat[(i == 0 ? 0 : flatEnds[i - 1])..<flatEnds[i]])
            termEnds.append(terms.count)
        }
        Self.scatterByTerm(&scratch, rank: rank, into: &output)
        buffers?.giveBack(scratch)
        self.lengths = output.lengths
        self.checks = checks
        self.terms = terms
        self.termEnds = termEnds
        self.termStarts = output.termStarts
        self.termDocuments = output.termDocuments
        self.termGroupEnds = output.termGroupEnds
        self.termGroups = output.termGroups
    }

    /// The ids of the terms `flat[ends[id - 1]..<ends[id]]` in byte order. Most terms differ in
    /// their first 8 bytes: those are compared as one number (``KeyOrdering/prefix(_:)``, as the
    /// loader sorts keys) and whole terms only on a tie (byte-by-byte comparisons took 6.6% of a
    /// part's analysis).
    private static func byteOrder(_ flat: [UInt8], ends: [Int]) -> [Int32] {
        struct Entry {
            var prefix: UInt64
            var id: Int32
        }
        return flat.withUnsafeBytes { bytes in
            ends.withUnsafeBufferPointer { ends in
                func term(_ id: Int32) -> UnsafeRawBufferPointer {
                    let i = Int(id)
                    return UnsafeRawBufferPointer(rebasing: bytes[(i == 0 ? 0 : ends[i - 1])..<ends[i]])
                }
                var entries = (0..<Int32(ends.count)).map { Entry(prefix: KeyOrdering.prefix(term($0)), id: $0) }
                entries.sort { a, b in
                    a.prefix != b.prefix ? a.prefix < b.prefix : KeyRange.compare(term(a.id), term(b.id)) < 0
                }
                return entries.map(\.id)
            }
        }
    }

    /// Counting sort of the postings by their terms' ranks (stable: document order within a
    /// term), moving their groups with them: postings are read in order and scattered (stores
    /// do not wait for memory the way loads do).
    private static func scatterByTerm(
        _ scratch: inout SearchAnalysisBuffers.Scratch, rank: [UInt32], into output: inout SearchAnalysisBuffers.Output
    ) {
        // Moved into locals for the loops (no access checks on the struct's fields), moved back at the end.
        var postings = [Posting]()
        var starts = [Int]()
        var termDocuments = [Int32]()
        var termGroupEnds = [Int32]()
        var termGroups = [UInt8]()
        swap(&postings, &scratch.postings)
        swap(&starts, &output.termStarts)
        swap(&termDocuments, &output.termDocuments)
        swap(&termGroupEnds, &output.termGroupEnds)
        swap(&termGroups, &output.termGroups)
        defer {
            swap(&postings, &scratch.postings)
            swap(&starts, &output.termStarts)
            swap(&termDocuments, &output.termDocuments)
            swap(&termGroupEnds, &output.termGroupEnds)
            swap(&termGroups, &output.termGroups)
        }
        let termCount = rank.count
        starts.append(contentsOf: repeatElement(0, count: termCount + 1))
        var byteStarts = [Int](repeating: 0, count: termCount + 1)
        for index in postings.indices {
            let k = Int(rank[Int(postings[index].term)])
            postings[index].term = UInt32(k)
            starts[k + 1] += 1
            byteStarts[k + 1] += Int(postings[index].end - postings[index].start)
        }
        for k in 0..<termCount {
            starts[k + 1] += starts[k]
            byteStarts[k + 1] += byteStarts[k]
        }
        termDocuments.append(contentsOf: repeatElement(0, count: postings.count))
        termGroupEnds.append(contentsOf: repeatElement(0, count: postings.count))
        termGroups.append(contentsOf: repeatElement(0, count: scratch.groups.count))
        var fill = starts
        var byteFill = byteStarts
        scratch.groups.withUnsafeBufferPointer { source in
            termGroups.withUnsafeMutableBufferPointer { target in
                termDocuments.withUnsafeMutableBufferPointer { documents in
                    termGroupEnds.withUnsafeMutableBufferPointer { ends in
                        for p in postings {
                            let k = Int(p.term)
                            let slot = fill[k]
                            fill[k] = slot + 1
                            var at = byteFill[k]
                            for i in Int(p.start)..<Int(p.end) {
                                target[at] = source[i]
                                at += 1
                            }
                            byteFill[k] = at
                            documents[slot] = p.document
                            ends[slot] = Int32(at)
                        }
                    }
                }
            }
        }
    }

    deinit {
        buffers?.giveBack(
            SearchAnalysisBuffers.Output(
                lengths: lengths, termStarts: termStarts, termDocuments: termDocuments, termGroupEnds: termGroupEnds,
                termGroups: termGroups))
    }

    /// The same analysis for documents `offset` places further on (a chunk's pieces joined).
    private init(_ part: SearchBatchPart, shiftedBy offset: Int) {
        range = (part.range.lowerBound + offset)..<(part.range.upperBound + offset)
        lengths = part.lengths
        checks = part.checks
        terms = part.terms
        termEnds = part.termEnds
        termStarts = part.termStarts
        termDocuments = part.termDocuments
        termGroupEnds = part.termGroupEnds
        termGroups = part.termGroups
        rules = part.rules
        buffers = nil
    }

    /// The parts of consecutive pieces of documents as parts of the pieces joined in order
    /// (`counts[i]` documents in piece `i`); nil unless every piece has its parts.
    static func joined(_ pieces: [[SearchBatchPart]?], counts: [Int]) -> [SearchBatchPart]? {
        var joined: [SearchBatchPart] = []
        var offset = 0
        for (parts, count) in zip(pieces, counts) {
            guard let parts else { return nil }
            joined += parts.map { SearchBatchPart($0, shiftedBy: offset) }
            offset += count
        }
        return joined
    }

    /// The number of distinct terms.
    var termCount: Int { termEnds.count }

    /// Term `k`'s bytes.
    func term(_ k: Int) -> ArraySlice<UInt8> { terms[(k == 0 ? 0 : termEnds[k - 1])..<termEnds[k]] }

    /// Term `k`'s slots in the term-ordered postings.
    func termSlots(_ k: Int) -> Range<Int> { termStarts[k]..<termStarts[k + 1] }

    /// How many terms each document of the part has, and how many bytes they and their groups
    /// take: the room ``documentTerms(_:sizes:into:)`` makes.
    func documentSizes() -> (entries: [Int], bytes: [Int]) {
        var entryCounts = [Int](repeating: 0, count: range.count)
        var byteCounts = [Int](repeating: 0, count: range.count)
        forEachPosting(ofDocuments: 0..<range.count) { d, term, groups in
            entryCounts[d] += 1
            byteCounts[d] += term.count + groups.count
        }
        return (entryCounts, byteCounts)
    }

    /// Fills `documents` with the terms and groups of the part's documents `slice` (indexes
    /// in the part), document `d` with those of document `slice.lowerBound + d`, in term order:
    /// for documents re-indexed one by one (records already in the index). `sizes` are the
    /// part's ``documentSizes()``. A pass over the term-ordered arrays, read front to back;
    /// gathered document by document instead, every posting cost the writer two cache misses
    /// (half of a reload's writer time).
    func documentTerms(
        _ slice: Range<Int>, sizes: (entries: [Int], bytes: [Int]), into documents: inout SearchDocumentTermSlice
    ) {
        documents.reset(entryCounts: sizes.entries[slice], byteCounts: sizes.bytes[slice])
        documents.fill { appender in
            forEachPosting(ofDocuments: slice) { d, term, groups in appender.append(d, term: term, groups: groups) }
        }
    }

    /// Calls `body` with each posting of the documents `slice` in term order: the document's
    /// place in the slice, the term's bytes and the posting's groups.
    @inline(__always)
    private func forEachPosting(
        ofDocuments slice: Range<Int>, _ body: (Int, UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void
    ) {
        let (low, high) = (Int32(slice.lowerBound), Int32(slice.upperBound))
        terms.withUnsafeBytes { terms in
            termGroups.withUnsafeBytes { groups in
                termDocuments.withUnsafeBufferPointer { termDocuments in
                    termGroupEnds.withUnsafeBufferPointer { termGroupEnds in
                        var groupStart = 0
                        for k in 0..<termCount {
                            let term = UnsafeRawBufferPointer(rebasing: terms[(k == 0 ? 0 : termEnds[k - 1])..<termEnds[k]])
                            for slot in termStarts[k]..<termStarts[k + 1] {
                                let j = termDocuments[slot]
                                let groupEnd = Int(termGroupEnds[slot])
                                if j >= low && j < high {
                                    body(Int(j - low), term, UnsafeRawBufferPointer(rebasing: groups[groupStart..<groupEnd]))
                                }
                                groupStart = groupEnd
                            }
                        }
                    }
                }
            }
        }
    }

    /// The occurrence groups of the posting in `slot`.
    func groups(ofSlot slot: Int) -> ArraySlice<UInt8> {
        termGroups[(slot == 0 ? 0 : Int(termGroupEnds[slot - 1]))..<Int(termGroupEnds[slot])]
    }

    /// The bytes of the groups of `slots`.
    func groupBytes(of slots: Range<Int>) -> Int {
        guard let last = slots.last else { return 0 }
        return Int(termGroupEnds[last]) - (slots.lowerBound == 0 ? 0 : Int(termGroupEnds[slots.lowerBound - 1]))
    }

    /// Calls `body` with the document index (in the part) and the groups of each posting of
    /// `slots`, in order.
    func forEachPosting(in slots: Range<Int>, _ body: (Int, UnsafeRawBufferPointer) throws -> Void) rethrows {
        guard !slots.isEmpty else { return }
        try termGroups.withUnsafeBytes { groups in
            try termDocuments.withUnsafeBufferPointer { documents in
                try termGroupEnds.withUnsafeBufferPointer { ends in
                    var start = slots.lowerBound == 0 ? 0 : Int(ends[slots.lowerBound - 1])
                    for slot in slots {
                        let end = Int(ends[slot])
                        try body(Int(documents[slot]), UnsafeRawBufferPointer(rebasing: groups[start..<end]))
                        start = end
                    }
                }
            }
        }
    }

    /// Cuts `count` documents into `parts` contiguous parts and analyses them concurrently.
    /// Arrays come from `buffers` when given (a bulk load's pool) and go back to it.
    static func analyse(
        count: Int, parts: Int, buffers: SearchAnalysisBuffers? = nil, rules: TokenizerOptions,
        _ texts: @Sendable (Int) -> [SearchText]
    ) -> [SearchBatchPart] {
        let n = max(1, min(parts, count / 256 + 1))
        let slots = PartSlots(n)
        DispatchQueue.concurrentPerform(iterations: n) { i in
            slots.set(i, SearchBatchPart(range: (count * i / n)..<(count * (i + 1) / n), buffers: buffers, rules: rules, texts))
        }
        return slots.parts
    }

    /// Where the concurrent iterations leave their parts, each in its own slot.
    private final class PartSlots: Sendable {
        private let slots: Mutex<[SearchBatchPart?]>
        init(_ n: Int) { slots = Mutex([SearchBatchPart?](repeating: nil, count: n)) }
        func set(_ i: Int, _ part: SearchBatchPart) { slots.withLock { $0[i] = part } }
        var parts: [SearchBatchPart] { slots.withLock { $0.map { $0! } } }
    }
}
