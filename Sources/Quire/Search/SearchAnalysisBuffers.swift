import Synchronization

/// The arrays of one chunk's search analysis, kept for the next chunk of the same bulk load.
///
/// A part of a 25,000-record chunk fills tens of megabytes of postings; fresh arrays of that size
/// come from `mmap` and cost a zeroed page each 4 KiB on first touch, and the doubling copies of
/// growth (perf at 100k articles: the part's page-fault samples 1,724 → 632; the wall time moved
/// within the machine's noise, since 4 chunks leave little to reuse). A load owns one pool, so
/// nothing is kept once the load ends.
final class SearchAnalysisBuffers: Sendable {
    /// What a part needs while it analyses: the postings in document order and their groups.
    struct Scratch: Sendable {
        var postings: [SearchBatchPart.Posting] = []
        var groups: [UInt8] = []
    }

    /// What a part keeps for the writer (see ``SearchBatchPart``'s properties of the same names).
    struct Output: Sendable {
        var lengths: [UInt32] = []
        var termStarts: [Int] = []
        var termDocuments: [Int32] = []
        var termGroupEnds: [Int32] = []
        var termGroups: [UInt8] = []
    }

    private let kept = Mutex<(scratch: [Scratch], outputs: [Output])>(([], []))

    init() {}

    /// Empty arrays, with the capacity of a part before when one was given back.
    func takeScratch() -> Scratch {
        guard var scratch = kept.withLock({ $0.scratch.popLast() }) else { return Scratch() }
        scratch.postings.removeAll(keepingCapacity: true)
        scratch.groups.removeAll(keepingCapacity: true)
        return scratch
    }

    /// Empty arrays for a part's output, with the capacity of a part before when one was given back.
    func takeOutput() -> Output {
        // Emptied here, not when given back: a part gives its arrays back from its deinit, while
        // it still holds them, and emptying a shared array would allocate a new one.
        guard var output = kept.withLock({ $0.outputs.popLast() }) else { return Output() }
        output.lengths.removeAll(keepingCapacity: true)
        output.termStarts.removeAll(keepingCapacity: true)
        output.termDocuments.removeAll(keepingCapacity: true)
        output.termGroupEnds.removeAll(keepingCapacity: true)
        output.termGroups.removeAll(keepingCapacity: true)
        return output
    }

    /// Gives a part's working arrays back for the next part.
    func giveBack(_ scratch: Scratch) { kept.withLock { $0.scratch.append(scratch) } }

    /// Gives a part's output arrays back once the part is gone.
    func giveBack(_ output: Output) { kept.withLock { $0.outputs.append(output) } }

    /// Drops the kept arrays (tens of megabytes a part): the load's last chunk is analysed.
    func release() { kept.withLock { $0 = ([], []) } }
}
