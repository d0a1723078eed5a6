import Dispatch
import Foundation
import QuireText

/// The tokenized text of a contiguous range of a batch's documents, grouped by term for a bulk
/// build: per document its field lengths, its distinct terms (the `s:<c>:doc` list) and its
/// postings; per term, in byte order, its postings in document order.
///
/// Built off the writer's own work: a batch is cut in as many parts as there are cores (two on
/// the machines we measure) and each part is analysed on its own thread with its own term table.
final class SearchBatchPart {
    let range: Range<Int>
    private(set) var table: TermTable
    /// 16 field lengths per document.
    private(set) var lengths: [UInt32] = []
    /// Each document's distinct terms as varint length + bytes, concatenated; `termListEnds[i]`
    /// ends document `i`'s.
    private(set) var termLists: [UInt8] = []
    private(set) var termListEnds: [Int] = []
    /// All occurrence groups (``SearchOccurrences``), concatenated.
    private(set) var groups: [UInt8] = []
    /// Postings in document order; `postingEnds[i]` ends document `i`'s.
    private(set) var postings: [Posting] = []
    private(set) var postingEnds: [Int] = []
    /// Local term ids in byte order of their terms.
    private(set) var termOrder: [UInt32] = []
    /// Per local term id, its postings' indexes (into `postings`) are `byTerm[termStarts[id]..<termStarts[id + 1]]`.
    private(set) var termStarts: [Int] = []
    private(set) var byTerm: [Int32] = []

    struct Posting {
        var term: UInt32
        /// The document's index in the part.
        var document: Int32
        var start: Int32
        var end: Int32
    }

    init(range: Range<Int>) {
        self.range = range
        table = TermTable(capacity: 1 << 15)
    }

    /// Tokenizes the documents of the part (`texts(i)` for each `i` in `range`) and groups them.
    func analyse(_ texts: (Int) -> [SearchText]) {
        var tokenizer = Tokenizer()
        var buffer = TokenBuffer()
        lengths.reserveCapacity(range.count * 16)
        termListEnds.reserveCapacity(range.count)
        postingEnds.reserveCapacity(range.count)
        for i in range {
            buffer.removeAll()
            var next = [UInt32](repeating: 0, count: 16)
            var used = [Bool](repeating: false, count: 16)
            for piece in texts(i) {
                let f = Int(piece.field & 15)
                let start = used[f] ? next[f] + SearchAnalyzer.valueGap : 0
                next[f] = tokenizer.tokenize(piece.text, field: piece.field & 15, startingAt: start, into: &buffer)
                used[f] = true
            }
            for f in 0..<16 { lengths.append(used[f] ? buffer.length(of: UInt8(f)) : 0) }
            let document = Int32(i - range.lowerBound)
            buffer.forEachTerm(interning: &table) { id, term, occurrences in
                SearchVarint.append(UInt64(term.count), to: &termLists)
                termLists.append(contentsOf: term)
                let start = Int32(groups.count)
                SearchOccurrences.encode(occurrences, into: &groups)
                postings.append(Posting(term: id, document: document, start: start, end: Int32(groups.count)))
            }
            termListEnds.append(termLists.count)
            postingEnds.append(postings.count)
        }
        group()
    }

    /// Counting sort of the postings by term (stable: document order within a term), and the
    /// terms in byte order.
    private func group() {
        var starts = [Int](repeating: 0, count: table.count + 1)
        for p in postings { starts[Int(p.term) + 1] += 1 }
        for t in 0..<table.count { starts[t + 1] += starts[t] }
        termStarts = starts
        byTerm = [Int32](repeating: 0, count: postings.count)
        var fill = starts
        for (index, p) in postings.enumerated() {
            byTerm[fill[Int(p.term)]] = Int32(index)
            fill[Int(p.term)] += 1
        }
        let table = self.table
        termOrder = (0..<UInt32(table.count)).sorted { a, b in
            table.withTerm(a) { x in table.withTerm(b) { y in x.lexicographicallyPrecedes(y) } }
        }
    }

    /// Cuts `count` documents into `parts` contiguous parts and analyses them concurrently.
    static func analyse(count: Int, parts: Int, _ texts: @Sendable (Int) -> [SearchText]) -> [SearchBatchPart] {
        let n = max(1, min(parts, count / 256 + 1))
        let result = (0..<n).map { SearchBatchPart(range: (count * $0 / n)..<(count * ($0 + 1) / n)) }
        let box = PartsBox(result)
        DispatchQueue.concurrentPerform(iterations: n) { box.parts[$0].analyse(texts) }
        return result
    }

    /// Hands the parts to the concurrent iterations: each touches only its own part.
    private final class PartsBox: @unchecked Sendable {
        let parts: [SearchBatchPart]
        init(_ parts: [SearchBatchPart]) { self.parts = parts }
    }

    /// Cores to spread a batch over.
    static let cores = max(1, min(4, ProcessInfo.processInfo.activeProcessorCount))
}
