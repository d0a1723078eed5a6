internal import QuireLMDB

/// The next batch of a segment merge, read on a thread of its own from a snapshot while the
/// writer applies the batch before it
/// (``SearchSegmentMerge/collectBatch(_:_:segments:keys:from:after:bytes:isCancelled:)``).
///
/// The snapshot is the one before that batch's commit, or the one after; both give the same
/// batch: it starts after the batch before's terms, which no other segment block follows, and
/// leaves out the blocks of its first term in the segments below where the batch before
/// stopped inside it. It is taken only when the writer's next transaction directly follows the
/// one that started the read (no other commit came between) and starts where it was read from.
struct PendingMergeBatch {
    let work: BackgroundWork<Result<SearchSegmentMerge.Batch, any Error>>
    private let from: SearchSegmentMerge.Stop
    private let last: UInt32
    private let segments: Set<UInt32>
    private let transaction: Int

    /// Starts reading the batch that begins at `from`, during the write transaction `transaction`.
    init(
        store: Store, _ postings: Database, segments: [UInt32], keys: SegmentKeys, from: SearchSegmentMerge.Stop,
        last: UInt32, bytes: Int, during transaction: Int
    ) {
        (self.from, self.last, self.segments, self.transaction) = (from, last, Set(segments), transaction)
        work = BackgroundWork {
            Result {
                try store.read { snapshot in
                    try SearchSegmentMerge.collectBatch(
                        postings, snapshot.lmdb, segments: segments, keys: keys, from: from.term, after: from.segment,
                        bytes: bytes, isCancelled: nil)
                }
            }
        }
    }

    /// The batch read, once read, when it is the one the write transaction `transaction` merges
    /// from `progress` over `segments`; nil when it is not (and a read that failed is read again
    /// there, its error thrown from the writer's own transaction).
    func batch(
        for progress: SegmentMergeProgress, segments current: [UInt32], transaction id: Int
    ) -> SearchSegmentMerge.Batch? {
        let read = work.wait()
        guard id == transaction + 1, progress.next == from.term, progress.nextSegment == from.segment,
            progress.last == last, current.allSatisfy(segments.contains), case .success(let batch) = read
        else { return nil }
        return batch
    }
}
