import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why writing to an output stopped.
enum OutputError: Error, Equatable, Sendable {
    /// The reader went away (`quire dump | head -1`): stop quietly and exit 0.
    case brokenPipe
    /// Ctrl-C (or SIGTERM, SIGHUP) while the output waited for a slow reader.
    case interrupted
    /// Any other write error, with its errno.
    case failed(errno: Int32)
}

/// A buffered writer for a file descriptor (stdout for data), flushed explicitly.
///
/// Writing byte by byte through `print` costs a syscall per line on a pipe; dumps write millions
/// of lines, so this keeps a large buffer and writes it in big chunks. `EPIPE` becomes
/// ``OutputError/brokenPipe`` (SIGPIPE is ignored by `main`), which `main` turns into a quiet exit 0.
final class OutputWriter {
    let fileDescriptor: Int32
    private var buffer: [UInt8] = []
    private let capacity: Int
    /// Whether anything was written (or buffered) so far.
    private(set) var hasOutput = false

    init(fileDescriptor: Int32 = STDOUT_FILENO, capacity: Int = 256 * 1024) {
        self.fileDescriptor = fileDescriptor
        self.capacity = capacity
        buffer.reserveCapacity(capacity)
    }

    /// Whether `fileDescriptor` is a pipe or socket whose reader has gone (`quire watch | head -2`
    /// once head has exited): a command that writes only when something happens learns it now,
    /// not at its next write, which may never come.
    static func readerHasGone(_ fileDescriptor: Int32) -> Bool {
        var entry = pollfd(fd: fileDescriptor, events: 0, revents: 0)
        return poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLERR | POLLHUP) != 0
    }

    /// Appends text (UTF-8), writing the buffer out when it is full.
    func write(_ text: String) throws(OutputError) {
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
        hasOutput = true
        if buffer.count >= capacity { try flush() }
    }

    /// Appends raw bytes, writing the buffer out when it is full.
    func write(bytes: some Sequence<UInt8>) throws(OutputError) {
        buffer.append(contentsOf: bytes)
        hasOutput = true
        if buffer.count >= capacity { try flush() }
    }

    /// Appends a line of text followed by `\n`.
    func line(_ text: String) throws(OutputError) {
        try write(text)
        try write(bytes: CollectionOfOne(UInt8(ascii: "\n")))
    }

    /// Writes everything buffered so far.
    func flush() throws(OutputError) {
        defer { buffer.removeAll(keepingCapacity: true) }
        var failure: OutputError?
        buffer.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                // A reader that stops reading must not hold the first Ctrl-C back: a write that
                // blocks then is woken (``BlockedWriteWakeUp``); after it, what is left (a
                // summary) goes out in pieces that cannot block, while the reader takes them.
                var count = bytes.count - offset
                if InterruptFlag.isRaised {
                    var ready = pollfd(fd: fileDescriptor, events: Int16(POLLOUT), revents: 0)
                    // A reader that takes nothing for a quarter of a second is not coming back
                    // in time: the stop was promised within a second.
                    guard poll(&ready, 1, 250) > 0 else {
                        failure = .interrupted
                        return
                    }
                    count = min(count, Int(PIPE_BUF))
                }
                let written = BlockedWriteWakeUp.around { systemWrite(fileDescriptor, bytes.baseAddress! + offset, count) }
                if written >= 0 {
                    offset += written
                    continue
                }
                let code = errno
                if code == EINTR { continue }  // woken by Ctrl-C: the loop now writes only what cannot block
                failure = code == EPIPE ? .brokenPipe : .failed(errno: code)
                return
            }
        }
        if let failure { throw failure }
    }
}

/// Writes diagnostics to stderr, unbuffered, ignoring errors (there is nowhere left to report them).
enum Diagnostics {
    /// Writes `text` as is to stderr.
    static func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = systemWrite(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    /// Prints `quire: <message>` on stderr, one line: control characters in `message` (which
    /// often quotes a server or a record) are shown escaped (see ``TerminalText``).
    static func error(_ message: String) {
        last.withLock { $0 = message }
        write("quire: \(TerminalText.escaped(message))\n")
    }

    /// The message of the last ``error(_:)``, for a `--json` answer to a failure.
    static var lastError: String? { last.withLock { $0 } }
    private static let last = Mutex<String?>(nil)
}

/// `write(2)`, named apart from the writer's own `write` methods.
private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.write(fd, bytes, count)
    #else
        Darwin.write(fd, bytes, count)
    #endif
}
