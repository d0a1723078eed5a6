import Dispatch
import Synchronization

/// Writes of this process waiting for LMDB's writer lock while another process holds it (a
/// load in another terminal, a writer stopped with Ctrl-Z): `mdb_txn_begin` blocks on that lock
/// and nothing in the process can wake it. A program that wants to say so, or to let the first
/// Ctrl-C end such a wait at once, installs ``onLongWait(after:_:)``; nothing is scheduled
/// before it does.
package enum WriterLockWait {
    /// Writes that have waited longer than the threshold and wait still: read by signal handlers
    /// (an atomic load is async-signal-safe).
    private static let longWaits = Atomic<Int>(0)
    private static let hook = Mutex<(threshold: Duration, body: @Sendable () -> Void)?>(nil)

    /// Whether a write of this process has waited longer than the threshold for another
    /// process's writer lock and waits still (nothing of its transaction exists yet).
    package static var isWaitingLong: Bool { longWaits.load(ordering: .relaxed) > 0 }

    /// Calls `body` (on a global queue) each time a write has waited `threshold` for the lock.
    package static func onLongWait(after threshold: Duration, _ body: @escaping @Sendable () -> Void) {
        _ = isWaitingLong  // the atomic made now, not first in a signal handler
        hook.withLock { $0 = (threshold, body) }
    }

    /// One wait's state: 0 waiting, 1 long (counted), 2 over.
    private final class Wait: Sendable {
        let state = Atomic<Int>(0)
    }

    /// Runs `begin` (a blocking `mdb_txn_begin` for a write), counted as a long wait once it has
    /// taken longer than the installed threshold.
    static func during<R>(_ begin: () -> R) -> R {
        guard let (threshold, body) = hook.withLock({ $0 }) else { return begin() }
        let wait = Wait()
        let seconds = Double(threshold.components.seconds) + Double(threshold.components.attoseconds) / 1e18
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            guard wait.state.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged else {
                return
            }
            longWaits.add(1, ordering: .relaxed)
            body()
        }
        let result = begin()
        if !wait.state.compareExchange(expected: 0, desired: 2, ordering: .acquiringAndReleasing).exchanged {
            longWaits.subtract(1, ordering: .relaxed)
        }
        return result
    }
}
