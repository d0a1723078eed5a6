import Quire

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A node's hold on its store path, for as long as it runs.
///
/// A node replaces its whole store directory when it installs a peer's snapshot, and cleans up
/// a half-done swap at its start: a second node on the same path would delete the first's
/// download, or go on writing into a directory the first had swapped away (its commits lost
/// with the replaced file). The lock is an `flock` on a file beside the directory (one inside
/// it would be swapped away with it); the kernel drops it when the process ends, however it
/// ends, so a killed node never leaves a stale lock. A node that stops removes the file (a
/// refused start left one beside every path tried): the holder unlinks it before letting go,
/// and a taker checks that the file it locked is still the one at the path.
final class NodeStoreLock {
    private var descriptor: Int32
    private let lockPath: String

    /// The lock file for the store at `path`.
    static func lockPath(for path: String) -> String { path + ".node-lock" }

    /// Takes the lock, or throws ``ClusterError/Code/storeInUse`` when another node holds it
    /// (`StoreError(.storage)` when the place cannot hold the lock file: a missing directory).
    init(path: String) throws {
        let lockPath = Self.lockPath(for: path)
        self.lockPath = lockPath
        while true {
            let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                // Not another node's: the place itself (it was called "store in use").
                let reason = errno
                if reason == ENOENT {
                    throw StoreError(.storage, "\(path): its directory does not exist (make it, or give --store a path in one that does)")
                }
                throw StoreError(.storage, "cannot open \(lockPath) to lock the store: \(String(cString: strerror(reason)))")
            }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let reason = errno
                close(descriptor)
                if reason == EWOULDBLOCK {
                    throw ClusterError(
                        .storeInUse,
                        "\(path) is the store of a node that is running (it holds \(lockPath)): give this node a store of its own")
                }
                throw ClusterError(.storeInUse, "cannot lock \(lockPath): \(String(cString: strerror(reason)))")
            }
            // Locked a file its holder unlinked meanwhile: a lock nobody else can see; again.
            var locked = stat()
            var named = stat()
            if fstat(descriptor, &locked) == 0, stat(lockPath, &named) == 0, locked.st_ino == named.st_ino,
                locked.st_dev == named.st_dev
            {
                self.descriptor = descriptor
                return
            }
            close(descriptor)
        }
    }

    /// Lets the lock go: removes the file while it holds it, then closes it (which drops the
    /// `flock`).
    func release() {
        guard descriptor >= 0 else { return }
        unlink(lockPath)
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
