/// The process-wide set of open environment paths.
///
/// lmdb.h: "Do not have open an LMDB database twice in the same process at the same time.
/// Not even from a plain open() call - close()ing it breaks flock() advisory locking."
enum OpenRegistry {
    private static let lock = ThreadLock()
    // Only touched with `lock` held.
    nonisolated(unsafe) private static var paths: Set<String> = []

    /// Claims `path`; false when it is already open in this process.
    static func claim(_ path: String) -> Bool {
        lock.withLock { paths.insert(path).inserted }
    }

    static func release(_ path: String) {
        _ = lock.withLock { paths.remove(path) }
    }
}
