#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Gives the lock file its disk blocks before LMDB maps it.
///
/// LMDB sizes `lock.mdb` with `ftruncate`: a sparse file, whose reader slots get their blocks
/// only when a reader first writes one, through the mapping. On a full file system that write
/// is a SIGBUS, which looked like a damaged store (120 readers on a full disk: 38 were told the
/// store was corrupted). Allocated up front, a full disk is an error at open, said as such.
enum LockFileSpace {
    /// The size LMDB gives a lock file of `maxReaders` slots (lmdb.h's `MDB_txninfo` with 64-byte
    /// cache lines: two padded bodies and the first slot, 192 bytes, then 64 bytes a slot).
    static func size(maxReaders: Int) -> Int { (max(1, maxReaders) - 1) * 64 + 192 }

    /// Allocates the blocks of `directory`'s lock file (created, as LMDB would create it, when
    /// missing or empty); throws only when the file system has no room for them.
    ///
    /// Called before `mdb_env_open`, while this process has no other descriptor of the file
    /// (the registry of open environments sees to that): closing one drops the process's
    /// `fcntl` locks on the file, which LMDB relies on. An existing file is never grown: its
    /// size is what the processes using it mapped.
    static func reserve(in directory: String, maxReaders: Int, mode: mode_t) throws(LMDBError) {
        let descriptor = open(directory + "/lock.mdb", O_RDWR | O_CREAT | O_CLOEXEC, mode)
        // Not writable here (a read-only copy, another user's store): LMDB's own open decides.
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return }
        let length = info.st_size > 0 ? Int(info.st_size) : size(maxReaders: maxReaders)
        let result = posix_fallocate(descriptor, 0, off_t(length))
        guard result == ENOSPC || result == EDQUOT else { return }
        throw LMDBError(
            code: result, operation: "open", path: directory,
            hint: "no room on the file system for the reader slots of lock.mdb; the store itself is untouched: free some space and run again")
    }
}
