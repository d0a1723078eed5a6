internal import QuireLMDB

/// A walk's entries in batches, each handed out with the result of work started on it (on
/// every core, a ``BackgroundWork``) while the batch before was handed out: `verify` decodes
/// the next batch while it looks up the current one's index entries, the table dump reads the
/// next batch's fields while it writes the current one's rows.
///
/// Noncopyable, and waits for the work in flight when it goes away: that work reads the map,
/// so none may outlive the walk's transaction, however the walk ends.
struct EntryBatchPipeline<Work: Sendable>: ~Copyable {
    typealias Batch = [(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)]

    private var entries: EntrySequence.Iterator
    private let size: Int
    /// Starts the work on a batch; nil leaves the batch without a result.
    private let start: (Batch) -> BackgroundWork<Work>?
    private var following: Batch?
    private var pending: BackgroundWork<Work>?

    init(_ entries: EntrySequence, batchSize: Int, start: @escaping (Batch) -> BackgroundWork<Work>?) {
        self.entries = entries.makeIterator()
        self.size = batchSize
        self.start = start
    }

    deinit { _ = pending?.wait() }

    /// The next batch with its work's result (nil when no work was started on it), or nil after
    /// the last. The work on the batch after it starts before this returns.
    mutating func next() -> (batch: Batch, result: Work?)? {
        if following == nil { (following, pending) = begin() }
        guard let batch = following, !batch.isEmpty else { return nil }
        let result = pending?.wait()
        (following, pending) = begin()
        return (batch, result)
    }

    private mutating func begin() -> (Batch, BackgroundWork<Work>?) {
        var batch: Batch = []
        batch.reserveCapacity(size)
        while batch.count < size, let entry = entries.next() { batch.append((entry.key, entry.value)) }
        return (batch, batch.isEmpty ? nil : start(batch))
    }
}
