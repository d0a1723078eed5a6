#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whole lines of input, a block of many at a time, read with `read(2)`.
///
/// A block is the unit a load parses in parallel and commits as one chunk, so the reader hands
/// out bytes that end at a line break (the partial line after it waits for the next block),
/// copied once. It waits with `poll(2)` in short steps so that a Ctrl-C while a slow pipe sends
/// nothing is seen within a tenth of a second (the signal may land on another thread, so an
/// interrupted `read` cannot be relied on). A read error is an error, never the end of the
/// input: loading a directory fails instead of loading nothing.
public final class LineBlockReader {
    /// Some whole lines: `bytes` ends with a line break (or the input's end).
    public struct Block: Sendable {
        /// The lines' bytes, line breaks included.
        public var bytes: [UInt8]
        /// The number (1-based) of the block's first line in the input.
        public var firstLine: Int
    }

    /// A line longer than this is refused, so that memory stays bounded whatever the input.
    public static let maximumLineLength = 64 << 20

    private let fd: Int32
    private let ownsFile: Bool
    /// The input's name in errors: the path, or `stdin`.
    public let name: String
    private let isInterrupted: @Sendable () -> Bool
    /// Bytes read but not yet handed out (the start of an unfinished line).
    private var pending: [UInt8] = []
    private var atEnd = false
    /// The number of the first line in `pending`.
    private var lineCounter = 1
    /// Whether the input's first bytes were looked at for a byte order mark.
    private var startChecked = false

    private static let readSize = 1 << 20
    private static let pollMilliseconds: Int32 = 100

    /// Opens `path`, or reads standard input when it is nil.
    /// - Parameters:
    ///   - path: The file to read; nil for standard input.
    ///   - isInterrupted: Polled while waiting for input; true ends the read with
    ///     ``LoadError/Kind/interrupted``.
    /// - Throws: ``LoadError`` when the file cannot be opened or is a directory.
    public init(path: String?, isInterrupted: @escaping @Sendable () -> Bool = { false }) throws(LoadError) {
        name = path ?? "stdin"
        self.isInterrupted = isInterrupted
        if let path {
            let opened = open(path, O_RDONLY | O_CLOEXEC)
            guard opened >= 0 else { throw LoadError(.input, "\(path): \(Self.describe(errno))") }
            fd = opened
            ownsFile = true
        } else {
            fd = STDIN_FILENO
            ownsFile = false
        }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            if ownsFile { close(fd) }
            throw LoadError(.input, "\(name): is a directory, not a JSON Lines file")
        }
    }

    deinit {
        if ownsFile { close(fd) }
    }

    /// The next block of at least `targetBytes` (unless the input ends first), or nil at the end.
    /// - Throws: ``LoadError`` for a read error, a line over ``maximumLineLength`` or an interrupt.
    public func next(targetBytes: Int) throws(LoadError) -> Block? {
        try skipByteOrderMark()
        var buffer = pending
        pending = []
        // Reserved up to a long line's size: `targetBytes` of `.max` ("one block") overflowed.
        buffer.reserveCapacity(min(max(targetBytes, 0), Self.maximumLineLength) + Self.readSize)
        var cut: Int?  // just past the last line break found
        var searched = 0
        while true {
            if let last = buffer[searched...].lastIndex(of: 10) { cut = last + 1 }
            searched = buffer.count
            if atEnd || (cut != nil && buffer.count >= targetBytes) { break }
            if cut == nil && buffer.count > Self.maximumLineLength {
                throw LoadError(.input, "the line is longer than \(Self.maximumLineLength >> 20) MiB", line: lineCounter)
            }
            // A pipe gone quiet with whole lines read: they are a block now, and so they are when
            // an interrupt comes (the next call reports it): a Ctrl-C while a slow producer
            // paused dropped what it had sent.
            do {
                if try fill(&buffer, stopWhenQuiet: cut != nil) { break }
            } catch let error where error.kind == .interrupted && cut != nil {
                break
            }
        }
        if atEnd && cut == nil { cut = buffer.count }  // a last line without a line break
        guard let end = cut, end > 0 else { return nil }
        if end < buffer.count {
            pending = Array(buffer[end...])
            buffer.removeSubrange(end...)
        }
        let block = Block(bytes: buffer, firstLine: lineCounter)
        lineCounter += buffer.reduce(into: 0) { count, byte in if byte == 10 { count += 1 } }
        return block
    }

    /// The next line without its line break (nor a `\r` before it), or nil at the end: for input
    /// read a line at a time (the small sections of a whole-store dump) before or between blocks.
    /// - Throws: ``LoadError`` as ``next(targetBytes:)`` does.
    public func nextLine() throws(LoadError) -> [UInt8]? {
        try skipByteOrderMark()
        var searched = 0
        while true {
            if let newline = pending[searched...].firstIndex(of: 10) {
                var end = newline
                while end > 0, pending[end - 1] == 13 { end -= 1 }
                let line = Array(pending[..<end])
                pending.removeSubrange(...newline)
                lineCounter += 1
                return line
            }
            searched = pending.count
            if atEnd {
                guard !pending.isEmpty else { return nil }
                let line = pending
                pending = []
                lineCounter += 1
                return line
            }
            if pending.count > Self.maximumLineLength {
                throw LoadError(.input, "the line is longer than \(Self.maximumLineLength >> 20) MiB", line: lineCounter)
            }
            try fill(&pending)
        }
    }

    /// The first `count` bytes still to be read past any blank lines and spaces (fewer at the end
    /// of the input), not consumed; after a byte order mark at the start (a whole-store dump's
    /// header behind one, or behind a blank line, was not seen as a header).
    public func peekPastBlankSpace(_ count: Int) throws(LoadError) -> [UInt8] {
        try skipByteOrderMark()
        func start() -> Int { pending.firstIndex { ![32, 9, 13, 10].contains($0) } ?? pending.count }
        while pending.count - start() < count && !atEnd { try fill(&pending) }
        return Array(pending[start()...].prefix(count))
    }

    /// The number (1-based) of the next line to be read.
    public var nextLineNumber: Int { lineCounter }

    /// Drops a UTF-8 byte order mark at the start of the input: editors on some systems write one
    /// before the first line, and JSON parsers may ignore it (RFC 8259, 8.1).
    private func skipByteOrderMark() throws(LoadError) {
        guard !startChecked else { return }
        while pending.count < 3 && !atEnd { try fill(&pending) }
        startChecked = true
        if pending.starts(with: [0xEF, 0xBB, 0xBF]) { pending.removeFirst(3) }
    }

    /// Appends up to `readSize` bytes, waiting in short polls so that an interrupt is noticed;
    /// with `stopWhenQuiet`, returns true instead of waiting on when a poll finds nothing.
    @discardableResult
    private func fill(_ buffer: inout [UInt8], stopWhenQuiet: Bool = false) throws(LoadError) -> Bool {
        while true {
            if isInterrupted() { throw LoadError(.interrupted, "interrupted") }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Self.pollMilliseconds)
            if ready < 0 && errno != EINTR { throw LoadError(.input, "\(name): \(Self.describe(errno))") }
            if ready == 0 && stopWhenQuiet { return true }
            if ready <= 0 { continue }
            let old = buffer.count
            buffer.append(contentsOf: repeatElement(0, count: Self.readSize))
            let n = buffer.withUnsafeMutableBytes { raw in read(fd, raw.baseAddress! + old, Self.readSize) }
            let code = errno
            buffer.removeSubrange((old + max(n, 0))...)
            if n > 0 { return false }
            if n == 0 {
                atEnd = true
                return false
            }
            if code == EINTR || code == EAGAIN { continue }
            throw LoadError(.input, "\(name): read failed: \(Self.describe(code))")
        }
    }

    private static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}
