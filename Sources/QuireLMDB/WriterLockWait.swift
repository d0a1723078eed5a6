import Dispatch
import Synchronization

/// Writes of this process waiting for LMDB's writer lock while another process holds it (a
/// load in another terminal, a writer stopped with Ctrl-Z): `mdb_txn_begin` blocks on that lock
/// and nothing in the process can wake it. A program that wants to say so, or to let the first
/// Ctrl-C end such a wait at once, installs ``onLongWait(after:_:)``: one timer then looks every
/// quarter of a second; a write only stores when it began waiting.
package enum WriterLockWait {
    /// When the wait under way began (`DispatchTime` nanoseconds), 0 when no write waits.
    private static let since = Atomic<UInt64>(0)
    /// Whether the wait under way is past the threshold: read by signal handlers (an atomic load
    /// is async-signal-safe).
    private static let long = Atomic<Bool>(false)
    /// The timer, made once (later calls of ``onLongWait(after:_:)`` change what it calls).
    private static let watchdog = Mutex<(threshold: UInt64, body: (@Sendable () -> Void)?, timer: Timer?)>((0, nil, nil))

    /// Holds the timer for the rest of the process.
    private final class Timer: @unchecked Sendable {
        // @unchecked: set once, then only read by dispatch.
        let source: any DispatchSourceTimer
        init(_ source: any DispatchSourceTimer) { self.source = source }
    }

    /// Whether a write of this process has waited longer than the threshold for another
    /// process's writer lock and waits still (its thread holds no transaction yet).
    package static var isWaitingLong: Bool { long.load(ordering: .sequentiallyConsistent) }

    /// Calls `body` (on a global queue) once each wait that lasts `threshold`.
    package static func onLongWait(after threshold: Duration, _ body: @escaping @Sendable () -> Void) {
        _ = isWaitingLong  // the atomics made now, not first in a signal handler
        let limit = UInt64(threshold.components.seconds) * 1_000_000_000
            + UInt64(threshold.components.attoseconds / 1_000_000_000)
        let start = watchdog.withLock { state in
            (state.threshold, state.body) = (limit, body)
            return state.timer == nil
        }
        guard start else { return }
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now(), repeating: .milliseconds(250), leeway: .milliseconds(50))
        timer.setEventHandler {
            let began = since.load(ordering: .sequentiallyConsistent)
            guard began != 0 else { return }
            let (limit, body, _) = watchdog.withLock { $0 }
            guard DispatchTime.now().uptimeNanoseconds &- began >= limit else { return }
            if !long.exchange(true, ordering: .sequentiallyConsistent) { body?() }
        }
        watchdog.withLock { $0.timer = Timer(timer) }
        timer.resume()
    }

    /// Runs `begin` (a blocking `mdb_txn_begin` for a write), its start stored for the timer.
    /// Writes wait one at a time per environment; waits under way at once (two environments', a
    /// write's and a copy's) share the first one's start.
    static func during<R>(_ begin: () -> R) -> R {
        began()
        let result = begin()
        ended()
        return result
    }

    /// A wait for the writer lock begins on some thread (a plain copy's `mdb_env_copyfd2`
    /// takes it to read the meta pages still). Waits are counted: a write's and a copy's may
    /// overlap, and the first to end must not clear the other's.
    static func began() {
        if waiters.add(1, ordering: .sequentiallyConsistent).oldValue == 0 {
            since.store(DispatchTime.now().uptimeNanoseconds, ordering: .sequentiallyConsistent)
        }
    }

    /// A wait ``began()`` started is over (the lock taken, or the attempt given up).
    static func ended() {
        if waiters.subtract(1, ordering: .sequentiallyConsistent).oldValue == 1 {
            since.store(0, ordering: .sequentiallyConsistent)
            long.store(false, ordering: .sequentiallyConsistent)
        }
    }

    /// How many waits are under way.
    private static let waiters = Atomic<Int>(0)
}
