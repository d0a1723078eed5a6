#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a file (or stdin) line by line as bytes, without loading it whole.
final class LineReader: Sequence, IteratorProtocol {
    private let file: UnsafeMutablePointer<FILE>
    private let ownsFile: Bool
    private var line: UnsafeMutablePointer<CChar>?
    private var capacity = 0
    /// The number of the line last returned (1-based).
    private(set) var lineNumber = 0

    /// Opens `path`, or stdin for `nil`.
    init(path: String?) throws(RuntimeError) {
        if let path {
            guard let f = fopen(path, "rb") else {
                throw RuntimeError("load", "\(path): \(String(cString: strerror(errno)))")
            }
            file = f
            ownsFile = true
        } else {
            guard let f = fdopen(STDIN_FILENO, "rb") else {
                throw RuntimeError("load", "stdin: \(String(cString: strerror(errno)))")
            }
            file = f
            ownsFile = false
        }
    }

    deinit {
        free(line)
        if ownsFile { fclose(file) }
    }

    /// The next line without its `\n` (or `\r\n`), or nil at the end.
    func next() -> [UInt8]? {
        let n = getline(&line, &capacity, file)
        guard n >= 0, let line else { return nil }
        lineNumber += 1
        var count = n
        while count > 0, line[count - 1] == 10 || line[count - 1] == 13 { count -= 1 }
        return UnsafeRawBufferPointer(start: line, count: count).map { $0 }
    }
}
