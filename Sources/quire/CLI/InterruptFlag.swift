#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Synchronization

/// How many times SIGINT/SIGTERM arrived. Global because a C signal handler cannot capture context;
/// an atomic because it is written from the handler and read from any thread.
private let interruptCount = Atomic<Int>(0)

/// Ctrl-C for long-running commands: the first SIGINT (or SIGTERM) only raises a flag that the
/// command polls between chunks, so it stops at a transaction boundary and leaves the store
/// consistent; a second one exits at once with status 130.
enum InterruptFlag {
    /// Installs the handlers. Call once, before starting the work that polls ``isRaised``.
    static func install() {
        BlockedWriteWakeUp.install()
        for signalNumber in [SIGINT, SIGTERM] {
            var action = sigaction()
            #if canImport(Glibc)
                action.__sigaction_handler.sa_handler = handleInterrupt
            #else
                action.__sigaction_u.__sa_handler = handleInterrupt
            #endif
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(signalNumber, &action, nil)
        }
    }

    /// Whether the user asked to stop. Poll this at chunk boundaries.
    static var isRaised: Bool { interruptCount.load(ordering: .relaxed) > 0 }

    /// Throws ``InterruptedError`` when the user asked to stop.
    static func check(_ command: String) throws(InterruptedError) {
        if isRaised { throw InterruptedError(command: command) }
    }
}

/// Only async-signal-safe work here: an atomic add, `write(2)` and `_exit(2)`.
private func handleInterrupt(_ signalNumber: Int32) {
    let previous = interruptCount.add(1, ordering: .relaxed).oldValue
    if previous > 0 {
        _exit(128 + signalNumber)
    }
    // The writer first: stderr may be the same full pipe (`2>&1 | slow`), and this write wait.
    BlockedWriteWakeUp.wake()
    let message: StaticString = "\nquire: interrupted; stopping at a safe point (press Ctrl-C again to quit now)\n"
    _ = message.withUTF8Buffer { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

extension InterruptFlag {
    /// The value of `task`, which is cancelled when Ctrl-C (or SIGTERM) arrives: a long command's
    /// work stops at its next cancellation point (between pages, chunks or transactions).
    static func value<T: Sendable>(of task: Task<T, any Error>) async throws -> T {
        let watcher = Task {
            while !Task.isCancelled {
                if isRaised {
                    task.cancel()
                    return
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        defer { watcher.cancel() }
        return try await task.value
    }
}
