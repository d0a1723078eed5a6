import Dispatch
import Foundation
import Synchronization

/// How many parts the store cuts work into to spread it over the cores (JSON rendering of a
/// batch of records, tokenizing a batch for the full-text index): the machine's cores, at most
/// four, past which the writer's own serial share dominates.
enum Parallelism {
    static let parts = max(1, min(4, ProcessInfo.processInfo.activeProcessorCount))

    /// `body` of each of up to ``parts`` contiguous ranges that cut `0..<count` (at least 64
    /// items a range), run concurrently; the results in range order.
    static func inParts<T: Sendable>(count: Int, _ body: @Sendable (Range<Int>) -> T) -> [T] {
        inNumberedParts(count: count) { _, range in body(range) }
    }

    /// ``inParts(count:_:)`` that tells `body` its part's number too (below ``parts``), for
    /// state each part keeps apart from the others'.
    static func inNumberedParts<T: Sendable>(count: Int, _ body: @Sendable (_ part: Int, Range<Int>) -> T) -> [T] {
        let n = max(1, min(parts, count / 64))
        let results = Mutex([T?](repeating: nil, count: n))
        DispatchQueue.concurrentPerform(iterations: n) { p in
            let result = body(p, (count * p / n)..<(count * (p + 1) / n))
            results.withLock { $0[p] = result }
        }
        return results.withLock { $0.map { $0! } }
    }
}

/// Records' bytes in the map, read by the parts' threads of ``Parallelism/inParts(count:_:)``
/// or by a ``BackgroundWork`` (a JSON walk's renders).
/// @unchecked: they are only read, and the caller's read transaction (holding the map still
/// behind the reader gate) lasts until the work that reads them has returned (`concurrentPerform`,
/// or the background work waited for), so every pointer stays valid while it is used.
struct MappedRecords: @unchecked Sendable {
    let records: [UnsafeRawBufferPointer]
}

/// Work started on a thread of its own now and waited for later, so that the caller's own
/// serial work overlaps it (verify looks up one batch of records while the next is decoded).
/// Not on Dispatch's pool: the caller holds one of its threads (as many as cores), and work
/// that cuts itself in ``Parallelism/parts`` there would find too few left to run on.
/// @unchecked: `value` is written once before `leave()` and read after `wait()`, which orders them.
final class BackgroundWork<T: Sendable>: @unchecked Sendable {
    private let group = DispatchGroup()
    private var value: T?

    /// Starts `work` (on a thread with `stackSize` bytes of stack when given: tests make one
    /// that cannot be had).
    init(stackSize: Int? = nil, _ work: @escaping @Sendable () -> T) {
        group.enter()
        do {
            try OSThread.start(stackSize: stackSize) {
                self.value = work()
                self.group.leave()
            }
        } catch {
            // No thread to be had (memory or the thread limit ran out): the work runs now, in
            // the caller's thread, without the overlap.
            value = work()
            group.leave()
        }
    }

    /// The result, once the work is done.
    func wait() -> T {
        group.wait()
        return value!
    }
}
