#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells a full disk behind LMDB's `EIO`.
///
/// `mdb_txn_commit` reports a short write as `EIO` (only a write that wrote nothing carries
/// `ENOSPC`), and on a full disk the last write is usually short: the user read "Input/output
/// error" and had to guess. A file system with (next to) no free blocks left makes it `ENOSPC`.
enum FullDisk {
    /// Free space below which a failed write is put down to a full disk: less than a few of
    /// LMDB's writes of a commit.
    static let threshold = 1 << 20

    /// `code`, or `ENOSPC` when it is `EIO` and the file system holding `path` is full.
    static func explain(_ code: Int32, at path: String) -> Int32 {
        guard code == EIO else { return code }
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return code }
        let blockSize = UInt64(info.f_frsize > 0 ? info.f_frsize : info.f_bsize)
        // Root may write into the reserved blocks (`f_bfree`), others only into `f_bavail`.
        let free = UInt64(geteuid() == 0 ? info.f_bfree : info.f_bavail) * blockSize
        return free < UInt64(threshold) ? ENOSPC : code
    }
}
