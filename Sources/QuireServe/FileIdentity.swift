import Foundation

/// A file's device and inode: the same path names another file once it was replaced (renamed
/// over, or its directory swapped).
package struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// The identity of the file at `path`, nil when there is none.
    package init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

/// A file's identity with its size and last change: the same file written over in place (a
/// backup copied onto it) has another stamp.
package struct FileStamp: Equatable, Sendable {
    let identity: FileIdentity
    let size: Int64
    let modified: timespec

    /// The stamp of the file at `path`, nil when there is none.
    package init?(_ path: String) {
        var info = stat()
        guard let identity = FileIdentity(path), stat(path, &info) == 0 else { return nil }
        self.identity = identity
        size = Int64(info.st_size)
        modified = info.st_mtim
    }

    package static func == (a: FileStamp, b: FileStamp) -> Bool {
        a.identity == b.identity && a.size == b.size && a.modified.tv_sec == b.modified.tv_sec
            && a.modified.tv_nsec == b.modified.tv_nsec
    }
}
