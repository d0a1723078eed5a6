#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether the process can start the threads a command needs, asked before any of them.
///
/// Under a limit of processes and threads (`ulimit -u`, a container's pids limit) the Swift
/// runtime's worker threads cannot start: the async work never ran and the command waited for
/// ever, deaf to the first Ctrl-C, with no word said. A few threads alive at once (the workers,
/// the writer's thread, a timer) are started and joined first instead.
enum ThreadStartProbe {
    /// Threads alive at once: about what a command runs beside the main thread.
    static let threads = 4

    /// Nil when `threads` threads could run at once, else the reason to print.
    static func failure() -> String? {
        // Each thread waits for the end of a pipe, closed once all are started: all are alive
        // together, as a command's are.
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        defer { close(ends[0]) }
        var started: [pthread_t] = []
        var failed: Int32 = 0
        for _ in 0..<threads {
            var thread = pthread_t()
            let result = pthread_create(&thread, nil, { argument in
                var byte: UInt8 = 0
                _ = read(Int32(truncatingIfNeeded: Int(bitPattern: argument)), &byte, 1)
                return nil
            }, UnsafeMutableRawPointer(bitPattern: Int(ends[0])))
            if result != 0 {
                failed = result
                break
            }
            started.append(thread)
        }
        close(ends[1])
        for thread in started { pthread_join(thread, nil) }
        guard failed != 0 else { return nil }
        return "cannot start the threads a command needs (\(String(cString: strerror(failed)))): the limit of processes and threads (ulimit -u, or a container's pids limit) is reached"
    }
}
