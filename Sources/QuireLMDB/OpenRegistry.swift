#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process-wide set of open environments, by the identity of their directory.
///
/// lmdb.h: "Do not have open an LMDB database twice in the same process at the same time.
/// Not even from a plain open() call - close()ing it breaks flock() advisory locking."
/// A path is not an identity: a bind mount or a second mount of the file system shows one
/// directory under two canonical paths, so the key is its device and inode.
enum OpenRegistry {
    /// A directory's identity on this machine.
    struct Identity: Hashable {
        let device: UInt64
        let inode: UInt64

        /// The identity of the directory at `path`; nil when it cannot be read.
        init?(directory path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    private static let lock = ThreadLock()
    // Only touched with `lock` held. An open environment's files pin its directory, so its
    // inode number is not given to another directory while it is in the set.
    nonisolated(unsafe) private static var open: Set<Identity> = []

    /// Claims `identity`; false when it is already open in this process.
    static func claim(_ identity: Identity) -> Bool {
        lock.withLock { open.insert(identity).inserted }
    }

    static func release(_ identity: Identity) {
        _ = lock.withLock { open.remove(identity) }
    }
}
