#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Synchronization

/// The thread blocked in `write(2)` on the output, if any (its `pthread_t`; 0 when none).
private let blockedWriter = Atomic<UInt>(0)

/// Lets the first Ctrl-C reach a command stuck writing into a full pipe (`quire watch | slow`).
///
/// A signal goes to any thread of the process, most often not the one blocked in `write(2)`,
/// whose write then goes on waiting for the reader. The interrupt handler sends the writing
/// thread a signal of its own (SIGURG, whose handler does nothing and does not restart the
/// call), so the write returns `EINTR` and the writer sees the raised flag.
enum BlockedWriteWakeUp {
    /// Installs the wake-up signal's handler. Call once, with ``InterruptFlag/install()``.
    static func install() {
        var action = sigaction()
        #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = { _ in }
        #else
            action.__sigaction_u.__sa_handler = { _ in }
        #endif
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0  // no SA_RESTART: the blocked write returns EINTR
        sigaction(SIGURG, &action, nil)
    }

    /// Runs `write`, a blocking `write(2)` of this thread, where an interrupt can wake it.
    static func around<R>(_ write: () -> R) -> R {
        // The pool's threads block most signals: this one takes the wake-up while it writes.
        var wakeUp = sigset_t()
        var previous = sigset_t()
        sigemptyset(&wakeUp)
        sigaddset(&wakeUp, SIGURG)
        pthread_sigmask(SIG_UNBLOCK, &wakeUp, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        #if canImport(Glibc)
            blockedWriter.store(UInt(pthread_self()), ordering: .releasing)
        #else
            blockedWriter.store(UInt(bitPattern: pthread_self()), ordering: .releasing)
        #endif
        defer { blockedWriter.store(0, ordering: .releasing) }
        return write()
    }

    /// Wakes the blocked writer, if any. Async-signal-safe: an atomic load and `pthread_kill`.
    static func wake() {
        let thread = blockedWriter.load(ordering: .acquiring)
        guard thread != 0 else { return }
        #if canImport(Glibc)
            pthread_kill(pthread_t(thread), SIGURG)
        #else
            if let handle = pthread_t(bitPattern: thread) { pthread_kill(handle, SIGURG) }
        #endif
    }
}
