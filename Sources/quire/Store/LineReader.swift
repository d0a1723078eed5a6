#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a file (or stdin) line by line as bytes, without loading it whole.
///
/// Reads with `read(2)` after `poll(2)` with a short timeout, so a Ctrl-C while a slow pipe
/// sends nothing stops the read within a tenth of a second (the signal may land on another
/// thread, so an interrupted `read` cannot be relied on). A read error is an error, never the
/// end of the input: `quire load somedir/` fails instead of loading nothing.
final class LineReader {
    private let fd: Int32
    private let ownsFile: Bool
    private let name: String
    private var buffer: [UInt8] = []
    private var start = 0
    /// Where the search for the next newline resumes (bytes before it hold none).
    private var scanned = 0
    private var atEnd = false
    /// Polled while waiting for input; true stops the read with ``InterruptedError``.
    var isInterrupted: () -> Bool = { InterruptFlag.isRaised }
    /// The number of the line last returned (1-based).
    private(set) var lineNumber = 0

    private static let chunkSize = 64 * 1024
    private static let pollMilliseconds: Int32 = 100

    /// Opens `path`, or stdin for `nil`.
    /// - Throws: `RuntimeError` when the file cannot be opened or is a directory.
    init(path: String?) throws(RuntimeError) {
        name = path ?? "stdin"
        if let path {
            let opened = open(path, O_RDONLY | O_CLOEXEC)
            guard opened >= 0 else { throw RuntimeError("load", "\(path): \(errorString(errno))") }
            fd = opened
            ownsFile = true
        } else {
            fd = STDIN_FILENO
            ownsFile = false
        }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            if ownsFile { close(fd) }
            throw RuntimeError("load", "\(name): is a directory, not a JSON Lines file")
        }
    }

    deinit {
        if ownsFile { close(fd) }
    }

    /// The next line without its `\n` (or `\r\n`), or nil at the end of the input.
    /// - Throws: `RuntimeError` for a read error; `InterruptedError` on Ctrl-C.
    func next() throws -> [UInt8]? {
        while true {
            if let newline = buffer[max(start, scanned)...].firstIndex(of: 10) {
                let line = take(upTo: newline)
                start = newline + 1
                scanned = start
                return line
            }
            scanned = buffer.count
            if atEnd {
                guard start < buffer.count else { return nil }
                let line = take(upTo: buffer.count)
                start = buffer.count
                return line
            }
            try fill()
        }
    }

    private func take(upTo end: Int) -> [UInt8] {
        lineNumber += 1
        var last = end
        while last > start, buffer[last - 1] == 13 { last -= 1 }
        return Array(buffer[start..<last])
    }

    /// Reads more input, waiting in short polls so that Ctrl-C is noticed.
    private func fill() throws {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            scanned -= start
            start = 0
        }
        while true {
            if isInterrupted() { throw InterruptedError(command: "load") }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Self.pollMilliseconds)
            if ready < 0 && errno != EINTR { throw RuntimeError("load", "\(name): \(errorString(errno))") }
            if ready <= 0 { continue }
            let old = buffer.count
            buffer.append(contentsOf: repeatElement(0, count: Self.chunkSize))
            let n = buffer.withUnsafeMutableBytes { raw in read(fd, raw.baseAddress! + old, Self.chunkSize) }
            let code = errno
            buffer.removeSubrange((old + max(n, 0))...)
            if n > 0 { return }
            if n == 0 {
                atEnd = true
                return
            }
            if code == EINTR || code == EAGAIN { continue }
            throw RuntimeError("load", "\(name): read failed: \(errorString(code))")
        }
    }
}
