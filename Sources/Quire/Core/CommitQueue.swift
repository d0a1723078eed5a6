import Synchronization

/// Single-record writes waiting for the next group commit.
///
/// Callers append and suspend; the writer drains everything queued into one transaction and
/// resumes each caller with its own result once the commit is done (and durable).
final class CommitQueue: Sendable {
    struct Pending: Sendable {
        let apply: @Sendable (borrowing StoreTransaction) throws -> Void
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var pending: [Pending] = []
        var flushScheduled = false
    }

    private let state = Locked(State())

    /// Queues a write; true when the caller must schedule a flush.
    func append(_ item: Pending) -> Bool {
        state.withLock { s in
            s.pending.append(item)
            if s.flushScheduled { return false }
            s.flushScheduled = true
            return true
        }
    }

    /// Takes everything queued; when nothing is left, clears the schedule flag so the next
    /// append schedules a new flush.
    func drain() -> [Pending] {
        state.withLock { s in
            if s.pending.isEmpty {
                s.flushScheduled = false
                return []
            }
            defer { s.pending.removeAll(keepingCapacity: true) }
            return s.pending
        }
    }
}
