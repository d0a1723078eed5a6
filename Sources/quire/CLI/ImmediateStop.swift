#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Synchronization

/// The phase: none, one under way (a signal may end the process), or ended by a signal (the
/// handler claimed it; the phase must not go on to write).
private let immediateStopState = Atomic<Int>(0)
private let idle = 0
private let active = 1
private let exiting = 2
/// Written before the state turns active, read by the handler after it claims the phase.
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
        immediateStopState.store(active, ordering: .sequentiallyConsistent)
        defer {
            // A handler that claimed the phase is exiting: the output after it must not begin.
            if !immediateStopState.compareExchange(expected: active, desired: idle, ordering: .sequentiallyConsistent).exchanged {
                while true { pause() }
            }
        }
        if InterruptFlag.isRaised { exitIfActive() }  // a signal that came just before
        return try body()
    }

    /// Ends the process when a phase run by ``during(_:_:)`` is under way. Async-signal-safe:
    /// atomic operations, `write(2)` and `_exit(2)`.
    static func exitIfActive() {
        guard immediateStopState.compareExchange(expected: active, desired: exiting, ordering: .sequentiallyConsistent).exchanged
        else { return }
        _ = immediateStopMessage.withUTF8Buffer { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        _exit(ExitStatus.interrupted)
    }
}
