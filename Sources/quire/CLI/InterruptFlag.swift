#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import QuireLMDB
import Synchronization

/// How many times SIGINT, SIGTERM or SIGHUP arrived. Global because a C signal handler cannot
/// capture context; an atomic because it is written from the handler and read from any thread.
private let interruptCount = Atomic<Int>(0)

/// Ctrl-C for long-running commands: the first SIGINT (or SIGTERM, or SIGHUP: the terminal
/// closed) only raises a flag that the command polls between chunks, so it stops at a
/// transaction boundary and leaves the store consistent; a second SIGINT or SIGTERM exits at once
/// with status 128 + the signal (130 for SIGINT).
enum InterruptFlag {
    /// Installs the handlers. Call once, before starting the work that polls ``isRaised``.
    static func install() {
        // The globals a handler reads are made now: lazily, in a handler, would not be signal-safe.
        _ = (interruptCount.load(ordering: .relaxed), waitNoted.load(ordering: .relaxed), ExitStatus.interrupted)
        _ = jsonAnswersWaitStop.load(ordering: .relaxed)
        _ = (deadlineMessage.load(ordering: .relaxed), deadlineMessageLength.load(ordering: .relaxed))
        ImmediateStop.exitIfActive()  // its globals made now too (nothing is active yet),
        WaitExitCleanup.removeRegistered()  // and these (nothing is registered yet)
        stderrIsTerminal.store(isatty(STDERR_FILENO) == 1, ordering: .relaxed)
        BlockedWriteWakeUp.install()
        WriterLockWait.onLongWait(after: .seconds(1)) {
            // A Ctrl-C that came while the wait was short is acted on now: no safe point comes.
            if isRaised { exitWhileWaitingForTheWriterLock() }
            if !waitNoted.exchange(true, ordering: .relaxed) {
                let note: StaticString =
                    "quire: waiting for another process that is writing to this store (Ctrl-C stops)\n"
                _ = note.withUTF8Buffer { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            }
        }
        handle(SIGALRM, with: handleStopDeadline)
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            // `nohup quire load …` asked for the hangup to be ignored: it stays so.
            if signalNumber == SIGHUP && isIgnored(SIGHUP) { continue }
            handle(signalNumber, with: handleInterrupt)
        }
    }

    /// Installs `handler` for `signalNumber` (no flags, nothing blocked while it runs).
    private static func handle(_ signalNumber: Int32, with handler: @convention(c) (Int32) -> Void) {
        var action = sigaction()
        #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = handler
        #else
            action.__sigaction_u.__sa_handler = handler
        #endif
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(signalNumber, &action, nil)
    }

    /// Whether `signalNumber` was ignored when the process started (inherited, as `nohup` sets).
    private static func isIgnored(_ signalNumber: Int32) -> Bool {
        var current = sigaction()
        guard sigaction(signalNumber, nil, &current) == 0 else { return false }
        #if canImport(Glibc)
            let handler = current.__sigaction_handler.sa_handler
        #else
            let handler = current.__sigaction_u.__sa_handler
        #endif
        return handler.map { unsafeBitCast($0, to: Int.self) } == unsafeBitCast(SIG_IGN, to: Int.self)
    }

    /// A `--json` run: a stop while waiting for another process's writer lock (which exits
    /// from the signal handler) answers on stdout too, as every other stop does.
    static func answerJSONOnWaitStop() {
        jsonAnswersWaitStop.store(true, ordering: .relaxed)
    }

    /// Whether the user asked to stop. Poll this at chunk boundaries.
    static var isRaised: Bool { interruptCount.load(ordering: .sequentiallyConsistent) > 0 }

    /// Throws ``InterruptedError`` when the user asked to stop.
    static func check(_ command: String) throws(InterruptedError) {
        if isRaised { throw InterruptedError(command: command) }
    }
}

/// Whether the wait for another process's writer lock has been told (once a run).
private let waitNoted = Atomic<Bool>(false)

/// Whether a stop during a writer-lock wait prints a JSON answer (``InterruptFlag/answerJSONOnWaitStop()``).
private let jsonAnswersWaitStop = Atomic<Bool>(false)

/// Whether stderr is a terminal, where a progress bar may hold the line: a message written from
/// a signal handler starts on a new line there, and only there (a log file got blank lines).
private let stderrIsTerminal = Atomic<Bool>(false)

/// Writes `message` to stderr from a signal handler, after a line break on a terminal.
/// Async-signal-safe: an atomic load and `write(2)`.
private func writeFromHandler(_ message: StaticString) {
    if stderrIsTerminal.load(ordering: .relaxed) {
        let newline: StaticString = "\n"
        _ = newline.withUTF8Buffer { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
    _ = message.withUTF8Buffer { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

/// Ends the process while a write waits for another process's writer lock: it holds no
/// transaction, and no safe point comes until the other process lets go, which may be never
/// (a writer stopped with Ctrl-Z). Status 130, as every stop by a first signal. Async-signal-safe.
private func exitWhileWaitingForTheWriterLock() -> Never {
    WaitExitCleanup.removeRegistered()  // a plain copy's temporary file, and its new directory
    writeFromHandler("quire: interrupted while waiting for another process's write to the store; nothing committed is lost\n")
    if jsonAnswersWaitStop.load(ordering: .relaxed) {
        let answer: StaticString =
            "{\"error\":\"interrupted while waiting for another process's write to the store\",\"interrupted\":true}\n"
        _ = answer.withUTF8Buffer { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    }
    _exit(ExitStatus.interrupted)
}

/// How long a first signal waits for the command's safe point before the process ends anyway.
private let stopDeadlineSeconds = 30

/// A command's own stop deadline (``InterruptFlag/endStop(within:saying:status:)``): its
/// message's bytes (static text: an address and a length) and exit status; no message is the
/// first signal's deadline.
private let deadlineMessage = Atomic<UInt>(0)
private let deadlineMessageLength = Atomic<Int>(0)
private let deadlineStatus = Atomic<Int32>(0)

/// The stop's deadline passed (`alarm(2)`): what a second Ctrl-C does, said, or the command's
/// own ending. Async-signal-safe: atomic loads, `write(2)` and `_exit(2)`.
private func handleStopDeadline(_ signalNumber: Int32) {
    WaitExitCleanup.removeRegistered()
    let message = deadlineMessage.load(ordering: .acquiring)
    guard message != 0 else {
        writeFromHandler("quire: no safe point came within 30 s of the stop; quitting now (nothing committed is lost)\n")
        _exit(ExitStatus.interrupted)
    }
    _ = write(STDERR_FILENO, UnsafeRawPointer(bitPattern: message), deadlineMessageLength.load(ordering: .relaxed))
    _exit(deadlineStatus.load(ordering: .relaxed))
}

extension InterruptFlag {
    /// Ends the stop under way within `seconds` (in place of the first signal's 30 s), saying
    /// `message` and exiting with `status`: for a command whose stop waits on work it may drop
    /// and whose stop is its success (`serve`'s requests under way). ``stopFinished()`` disarms it.
    static func endStop(within seconds: UInt32, saying message: StaticString, status: Int32) {
        deadlineStatus.store(status, ordering: .relaxed)
        deadlineMessageLength.store(message.utf8CodeUnitCount, ordering: .relaxed)
        deadlineMessage.store(UInt(bitPattern: message.utf8Start), ordering: .releasing)
        alarm(seconds)
    }

    /// The stop finished in time: no deadline ends the process now.
    static func stopFinished() { alarm(0) }
}

/// Only async-signal-safe work here: atomic loads and adds, `write(2)` and `_exit(2)`.
private func handleInterrupt(_ signalNumber: Int32) {
    // A hangup says the terminal is gone, once or more (the kernel and the shell may both send
    // it): never the user's second, impatient request.
    if signalNumber == SIGHUP && interruptCount.load(ordering: .sequentiallyConsistent) > 0 { return }
    // Sequentially consistent, as the wait's timer: it stores `long` then reads the count, this
    // adds to the count then reads `long`; one of the two sees the other.
    let previous = interruptCount.add(1, ordering: .sequentiallyConsistent).oldValue
    if previous > 0 {
        _exit(128 + signalNumber)
    }
    if WriterLockWait.isWaitingLong { exitWhileWaitingForTheWriterLock() }
    ImmediateStop.exitIfActive()
    // A command that never reaches a safe point (its threads could not start, a wait nothing
    // ends) still stops: as a second Ctrl-C would, a while later.
    alarm(UInt32(stopDeadlineSeconds))
    // The writer first: stderr may be the same full pipe (`2>&1 | slow`), and this write wait.
    BlockedWriteWakeUp.wake()
    writeFromHandler("quire: interrupted; stopping at a safe point (press Ctrl-C again to quit now)\n")
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
