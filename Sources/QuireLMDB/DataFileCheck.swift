internal import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks an environment's data file against its own meta pages before LMDB maps it.
///
/// LMDB maps the whole file and trusts the meta page: a file cut short (a full disk in a copy, a
/// killed copy, a truncated restore) ends the process with SIGBUS at the first read beyond its
/// end, and a zero-length file is silently initialized as a new, empty environment. Reading the
/// two meta pages with `pread` first turns both into an error.
enum DataFileCheck {
    /// The smallest environment LMDB writes: two meta pages of the smallest page size.
    static let minimumFileSize = 2 * 4096

    /// What the meta pages of a data file say.
    struct Meta: Equatable {
        /// The page size recorded in the meta page.
        var pageSize: Int
        /// The last page in use.
        var lastPage: UInt64
        /// The transaction id of the meta page.
        var transactionID: UInt64
        /// The roots of the free list's and the main database's trees (`UInt64.max`: empty).
        var freeRoot: UInt64
        var mainRoot: UInt64
        /// The main database's flags (`MDB_INTEGERKEY`, `MDB_REVERSEKEY`: its key order).
        var mainFlags: UInt16 = 0

        /// Whether `lastPage` is a page a file can have (a damaged meta page names any number).
        var isPlausible: Bool { lastPage < UInt64(Int64.max) / UInt64(pageSize) }

        /// The bytes the environment needs: every page up to `lastPage` (all of them when
        /// `lastPage` is no page a file can have).
        var requiredSize: UInt64 { isPlausible ? (lastPage + 1) * UInt64(pageSize) : .max }
    }

    // MDB_page header (16 bytes on 64-bit), then MDB_meta: magic, version, address, mapsize,
    // two MDB_db of 48 bytes (the free DB's md_pad holds the page size), last_pg, txnid.
    private static let magic: UInt32 = 0xBEEF_C0DE
    private static let metaOffset = 16
    private static let pageSizeOffset = metaOffset + 24
    private static let lastPageOffset = metaOffset + 24 + 96
    private static let transactionIDOffset = lastPageOffset + 8
    // Each MDB_db record ends with its root page.
    private static let freeRootOffset = metaOffset + 24 + 40
    private static let mainRootOffset = metaOffset + 24 + 48 + 40
    private static let mainFlagsOffset = metaOffset + 24 + 48 + 4

    /// Throws when `directory/data.mdb` exists but is shorter than its meta pages require (or
    /// empty). Does nothing when the file is missing (a new environment) or the meta pages are
    /// not LMDB's (LMDB reports those itself).
    static func check(directory: String, lockless: Bool = false) throws(LMDBError) {
        let path = directory + "/data.mdb"
        // Not a regular file (a FIFO would block every open for ever, a device be mapped):
        // refused before anything opens it.
        var info = stat()
        if stat(path, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG, (info.st_mode & S_IFMT) != S_IFDIR {
            throw LMDBError(
                code: MDB_INVALID, operation: "open", path: directory,
                reason: "data.mdb is a pipe, a device or a socket, not a file")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 { return }
        defer { close(fd) }
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return }
        let size = UInt64(info.st_size)
        if let pageSize = impossiblePageSize(fd: fd) {
            // LMDB divides by it: the process ended with SIGFPE.
            throw LMDBError(
                code: MDB_CORRUPTED, operation: "open", path: directory,
                reason: "the newest meta page is damaged: it gives a page size of \(pageSize) bytes, which no LMDB file has; restore a backup")
        }
        guard let meta = newestMeta(fd: fd, fileSize: size) else {
            if size == 0 { throw truncated(path: directory, size: size, required: UInt64(minimumFileSize)) }
            if size < UInt64(minimumFileSize) {
                throw LMDBError(
                    code: MDB_INVALID, operation: "open", path: directory,
                    reason: "data.mdb is \(size) bytes without LMDB's meta page")
            }
            return
        }
        guard meta.isPlausible else {
            // LMDB would try to map it and say only "Cannot allocate memory".
            throw LMDBError(
                code: MDB_CORRUPTED, operation: "open", path: directory,
                reason: "the newest meta page is damaged: it names page \(meta.lastPage) as the last, beyond any file; restore a backup")
        }
        if size < meta.requiredSize {
            throw truncated(path: directory, size: size, required: meta.requiredSize)
        }
        if let newest = MetaPageRecovery.damagedNewest(fd: fd) {
            // LMDB would open it and fail, or fault, at the first read through its roots.
            throw LMDBError(
                code: MDB_CORRUPTED, operation: "open", path: directory,
                reason: "its newest meta page, page \(newest.page), is damaged: \(newest.problem ?? "")")
        }
    }

    /// Whether `directory/data.mdb` is empty or shorter than its meta pages require: a file cut
    /// short, which a whole one renamed over it mends (not a file damaged otherwise).
    static func isCutShort(directory: String) -> Bool {
        let fd = open(directory + "/data.mdb", O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        let size = UInt64(info.st_size)
        if size == 0 { return true }
        guard let meta = newestMeta(fd: fd, fileSize: size), meta.isPlausible else { return false }
        return size < meta.requiredSize
    }

    static func truncated(path: String, size: UInt64, required: UInt64) -> LMDBError {
        LMDBError(
            code: MDB_CORRUPTED, operation: "open", path: path,
            reason: "store file truncated (\(size) of \(required) bytes); restore a backup")
    }

    /// The valid meta page with the highest transaction id, as LMDB would pick it.
    static func newestMeta(fd: Int32, fileSize: UInt64) -> Meta? {
        guard let first = readMeta(fd: fd, at: 0) else { return nil }
        // LMDB requires both meta pages to be valid; the second sits one page further.
        guard fileSize >= UInt64(2 * first.pageSize), let second = readMeta(fd: fd, at: first.pageSize) else {
            return first
        }
        return second.transactionID > first.transactionID ? second : first
    }

    /// The meta page at `offset` of the file, when it is LMDB's.
    static func readMeta(fd: Int32, at offset: Int) -> Meta? {
        guard let raw = rawMeta(fd: fd, at: offset), isPageSize(raw.pageSize) else { return nil }
        return raw
    }

    /// Whether `size` is a page size LMDB writes (a power of two from 512 bytes to 64 KiB).
    static func isPageSize(_ size: Int) -> Bool { size >= 512 && size <= 1 << 16 && size & (size - 1) == 0 }

    /// The page size of the meta page LMDB would take (page 0's, or the one after it when newer,
    /// read where page 0's size puts it), when that is no page size at all.
    static func impossiblePageSize(fd: Int32) -> Int? {
        guard let first = rawMeta(fd: fd, at: 0) else { return nil }
        var taken = first
        if first.pageSize > 0, let second = rawMeta(fd: fd, at: first.pageSize), second.transactionID > first.transactionID {
            taken = second
        }
        return isPageSize(taken.pageSize) ? nil : taken.pageSize
    }

    /// The fields of the meta page at `offset` when it carries LMDB's magic, the page size unchecked.
    private static func rawMeta(fd: Int32, at offset: Int) -> Meta? {
        var bytes = [UInt8](repeating: 0, count: transactionIDOffset + 8)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
        guard n == bytes.count else { return nil }
        func load<T: FixedWidthInteger>(_ at: Int, _: T.Type) -> T {
            var value: T = 0
            for i in (0..<MemoryLayout<T>.size).reversed() { value = value << 8 | T(bytes[at + i]) }
            return value
        }
        guard load(metaOffset, UInt32.self) == magic else { return nil }
        return Meta(
            pageSize: Int(load(pageSizeOffset, UInt32.self)), lastPage: load(lastPageOffset, UInt64.self),
            transactionID: load(transactionIDOffset, UInt64.self),
            freeRoot: load(freeRootOffset, UInt64.self), mainRoot: load(mainRootOffset, UInt64.self),
            mainFlags: load(mainFlagsOffset, UInt16.self))
    }
}
