#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Synchronization

/// Whether the phase under way holds nothing a stop could lose, and what the stop says then.
private let immediateStopActive = Atomic<Bool>(false)
/// Written before ``immediateStopActive`` is raised (release), read after it (acquire).
nonisolated(unsafe) private var immediateStopMessage: StaticString = ""

/// Phases of a read-only command that hold nothing a stop could lose and offer no safe point
/// to poll from for a while (a search ranking every match of common words before its first
/// hit): the first SIGINT or SIGTERM ends the process at once, with its message and status 130.
/// The read transaction it holds is let go with the process, as after any exit.
enum ImmediateStop {
    /// Runs `body`, during which the first signal ends the process with `message`. Nothing may
    /// be written to stdout inside `body`.
    static func during<R>(_ message: StaticString, _ body: () throws -> R) rethrows -> R {
        immediateStopMessage = message
        immediateStopActive.store(true, ordering: .releasing)
        defer { immediateStopActive.store(false, ordering: .releasing) }
        if InterruptFlag.isRaised { exitNow() }  // a signal that came just before
        return try body()
    }

    /// Ends the process when a phase run by ``during(_:_:)`` is under way. Async-signal-safe: an
    /// atomic load, `write(2)` and `_exit(2)`.
    static func exitIfActive() {
        if immediateStopActive.load(ordering: .acquiring) { exitNow() }
    }

    private static func exitNow() -> Never {
        _ = immediateStopMessage.withUTF8Buffer { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        _exit(ExitStatus.interrupted)
    }
}
