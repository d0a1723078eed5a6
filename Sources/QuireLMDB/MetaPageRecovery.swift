internal import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A copy of a data file as one of its two meta pages describes it.
///
/// LMDB keeps the trees of its last two commits whole, each named by one of the two meta pages
/// at the start of the file, and opens the newer. One damaged meta page (a torn write at a power
/// loss, a flipped byte) makes the whole file unreadable: a bad magic or version in either page
/// refuses the open, a bad root in the newer one fails it. The other page's commit is still
/// whole, but LMDB 0.9.24 cannot be asked to open it (`MDB_PREVSNAPSHOT` came later): the copy
/// writes the chosen page into both places, so LMDB opens the copy at that commit.
package enum MetaPageRecovery {
    /// What one of the two meta pages holds.
    package struct Slot: Equatable, Sendable {
        /// 0 or 1: the page's number.
        package let page: Int
        /// The commit the page names, when its fields could be read.
        package let transactionID: UInt64?
        /// Why the page cannot be used, or nil when it looks intact.
        package let problem: String?
        /// The page size it gives, when intact.
        package var pageSize: Int? = nil
    }

    private static let metaFlag: UInt16 = 0x08  // P_META
    private static let treeFlags: UInt16 = 0x01 | 0x02  // P_BRANCH | P_LEAF
    private static let dataVersion: UInt32 = 1  // MDB_DATA_VERSION
    private static let noRoot = UInt64.max  // P_INVALID: an empty tree

    /// The two meta pages of `directory/data.mdb`, each checked on its own: LMDB's magic and
    /// version, a page size, a last page inside the file, roots that are tree pages naming
    /// themselves. Nil when the file cannot be read.
    package static func inspect(directory: String) -> [Slot]? {
        let fd = open(directory + "/data.mdb", O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return inspect(fd: fd)
    }

    /// ``inspect(directory:)`` of the data file open at `fd`.
    static func inspect(fd: Int32) -> [Slot]? {
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let size = UInt64(info.st_size)
        let first = slot(0, at: 0, fd: fd, fileSize: size)
        // Page 1 sits one page on: where page 0 says, else at the first size whose page is LMDB's.
        let sizes = [pageSize(fd: fd, at: 0)].compactMap { $0 } + (9...16).map { 1 << $0 }
        let second = sizes.lazy.map { slot(1, at: $0, fd: fd, fileSize: size) }.first { $0.transactionID != nil }
        return [first, second ?? Slot(page: 1, transactionID: nil, problem: "it is not LMDB's meta page")]
    }

    /// When exactly one of the two meta pages looks intact: the damaged one, the intact one, and
    /// whether the intact one is the newer commit (a copy from it loses nothing; nil when the
    /// damaged page's commit cannot be read).
    package static func recovery(directory: String) -> (damaged: Slot, intact: Slot, isNewest: Bool?)? {
        guard let slots = inspect(directory: directory) else { return nil }
        let intact = slots.filter { $0.problem == nil }
        guard intact.count == 1, let good = intact.first, let id = good.transactionID else { return nil }
        let bad = slots[1 - good.page]
        return (bad, good, bad.transactionID.map { $0 < id })
    }

    /// The meta page LMDB would open the file at (the newer of two that carry its magic), when
    /// it is damaged and the other is intact: LMDB opens such a file and then fails, or faults,
    /// at the first read through the damaged root. Read twice a moment apart, so that a commit
    /// rewriting the page meanwhile (a torn read) is not taken for damage. `fd`: the data file,
    /// open (the open's own check has it).
    static func damagedNewest(fd: Int32) -> Slot? {
        func found() -> Slot? {
            guard let slots = inspect(fd: fd), let a = slots[0].transactionID, let b = slots[1].transactionID else {
                return nil
            }
            let newest = slots[a > b ? 0 : 1]
            return newest.problem != nil && slots[1 - newest.page].problem == nil ? newest : nil
        }
        guard let first = found() else { return nil }
        usleep(20_000)
        return found() == first ? first : nil
    }

    /// Copies `directory/data.mdb` into `destination` (absent, or an empty directory) with both
    /// meta pages set to `page`'s, after checking that page. The source must not be written
    /// meanwhile (a commit may reuse the older commit's pages): a meta page that changes during
    /// the copy fails it. Polls `isCancelled` between blocks; a failed copy leaves no file.
    /// - Returns: the commit the copy holds.
    package static func copy(
        from directory: String, page: Int, to destination: String, isCancelled: () -> Bool = { false }
    ) throws(LMDBError) -> UInt64 {
        guard let slots = inspect(directory: directory), slots.indices.contains(page) else {
            throw LMDBError(code: errno == 0 ? ENOENT : errno, operation: "open", path: directory + "/data.mdb")
        }
        let chosen = slots[page]
        guard let id = chosen.transactionID, chosen.problem == nil else {
            throw LMDBError(
                code: MDB_CORRUPTED, operation: "copy", path: directory,
                reason: "meta page \(page) is damaged (\(chosen.problem ?? "")): the store cannot be recovered from it")
        }
        let source = open(directory + "/data.mdb", O_RDONLY | O_CLOEXEC)
        guard source >= 0 else { throw LMDBError(code: errno, operation: "open", path: directory + "/data.mdb") }
        defer { close(source) }
        let size = chosen.pageSize ?? 4096
        var metaBytes = [UInt8](repeating: 0, count: size)
        let offset = page * size
        guard readFully(source, into: &metaBytes, at: offset) else {
            throw LMDBError(code: errno == 0 ? EIO : errno, operation: "read", path: directory + "/data.mdb")
        }

        let (fd, temporary, _) = try Environment.beginCopyFile(in: destination, operation: "copy")
        var linked = false
        defer {
            close(fd)
            if !linked { unlink(temporary) }
        }
        try copyBytes(from: source, to: fd, path: destination, isCancelled: isCancelled)
        // The other page becomes the chosen one, its own page number kept.
        for i in 0..<8 { metaBytes[i] = UInt8(truncatingIfNeeded: UInt64(1 - page) >> (8 * UInt64(i))) }
        let written = metaBytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t((1 - page) * size)) }
        guard written == size else { throw LMDBError(code: errno == 0 ? ENOSPC : errno, operation: "write", path: destination) }
        // A commit during the copy rewrote a meta page (and may have reused the older commit's pages).
        guard inspect(directory: directory) == slots else {
            throw LMDBError(
                code: MDB_CORRUPTED, operation: "copy", path: directory,
                reason: "the store was written during the copy: stop its writers (a store that opens is copied with quire copy)")
        }
        try Environment.finishCopyFile(fd, temporary: temporary, in: destination)
        linked = true
        return id
    }

    /// Every byte of `source` into `fd`, a MiB at a time.
    private static func copyBytes(from source: Int32, to fd: Int32, path: String, isCancelled: () -> Bool) throws(LMDBError) {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: off_t = 0
        while true {
            if isCancelled() { throw LMDBError(code: ECANCELED, operation: "copy", path: path, hint: "the copy was cancelled") }
            let n = buffer.withUnsafeMutableBytes { pread(source, $0.baseAddress, $0.count, offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw LMDBError(code: errno, operation: "read", path: path)
            }
            if n == 0 { return }
            var done = 0
            while done < n {
                let w = buffer.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, n - done, offset + off_t(done)) }
                if w < 0 {
                    if errno == EINTR { continue }
                    throw LMDBError(code: errno, operation: "write", path: path)
                }
                done += w
            }
            offset += off_t(n)
        }
    }

    /// Page `page`, read at `offset`, checked.
    private static func slot(_ page: Int, at offset: Int, fd: Int32, fileSize: UInt64) -> Slot {
        var bytes = [UInt8](repeating: 0, count: 160)
        guard readFully(fd, into: &bytes, at: offset) else { return Slot(page: page, transactionID: nil, problem: "the file ends before it") }
        guard load(bytes, 16, UInt32.self) == 0xBEEF_C0DE else {
            return Slot(page: page, transactionID: nil, problem: "it is not LMDB's meta page")
        }
        let id = load(bytes, 144, UInt64.self)
        func damaged(_ why: String) -> Slot { Slot(page: page, transactionID: id, problem: why) }
        // (LMDB reads no meta page's own number: one damaged there is no damage to it.)
        guard load(bytes, 10, UInt16.self) & metaFlag != 0 else { return damaged("its page is not marked a meta page") }
        guard load(bytes, 20, UInt32.self) == dataVersion else { return damaged("its format version is \(load(bytes, 20, UInt32.self))") }
        let size = Int(load(bytes, 40, UInt32.self))
        guard DataFileCheck.isPageSize(size), offset == page * size else { return damaged("its page size of \(size) bytes is not the file's") }
        let last = load(bytes, 136, UInt64.self)
        guard last < fileSize / UInt64(size) else { return damaged("its last page, \(last), is past the end of the file") }
        for (tree, at) in [("free list", 80), ("main database", 128)] {
            let root = load(bytes, at, UInt64.self)
            guard root != noRoot else { continue }
            guard root >= 2, root <= last else { return damaged("the \(tree)'s root, page \(root), is no page of the commit") }
            var header = [UInt8](repeating: 0, count: 16)
            guard readFully(fd, into: &header, at: Int(root) * size), load(header, 0, UInt64.self) == root,
                load(header, 10, UInt16.self) & treeFlags != 0
            else { return damaged("the \(tree)'s root, page \(root), is not a tree page") }
        }
        return Slot(page: page, transactionID: id, problem: nil, pageSize: size)
    }

    /// The page size a meta page at `offset` gives, when it is LMDB's and the size is one.
    private static func pageSize(fd: Int32, at offset: Int) -> Int? {
        var bytes = [UInt8](repeating: 0, count: 44)
        guard readFully(fd, into: &bytes, at: offset), load(bytes, 16, UInt32.self) == 0xBEEF_C0DE else { return nil }
        let size = Int(load(bytes, 40, UInt32.self))
        return DataFileCheck.isPageSize(size) ? size : nil
    }

    private static func readFully(_ fd: Int32, into bytes: inout [UInt8], at offset: Int) -> Bool {
        errno = 0
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
        return n == bytes.count
    }

    private static func load<T: FixedWidthInteger>(_ bytes: [UInt8], _ at: Int, _: T.Type) -> T {
        var value: T = 0
        for i in (0..<MemoryLayout<T>.size).reversed() { value = value << 8 | T(bytes[at + i]) }
        return value
    }
}
