internal import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An error returned by LMDB, with the operation that failed and a hint where one helps.
///
/// LMDB reports both its own codes (`MDB_MAP_FULL`, `MDB_NOTFOUND`, …) and plain `errno` values
/// (`ENOSPC`, `EACCES`), so this is a struct over the raw code rather than a closed enum.
/// Match a code with `catch LMDBError.mapFull` or `catch let e as LMDBError where e == .mapFull`.
package struct LMDBError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The LMDB or `errno` code.
    package let code: Int32
    /// The operation that failed, such as `mdb_put`.
    package let operation: String
    /// The environment path, when known.
    package let path: String?
    /// Advice for the caller, when the code has a known remedy.
    package let hint: String?
    /// What this package found itself, shown instead of `mdb_strerror`'s text (for example a
    /// truncated data file, found before LMDB maps it).
    package let reason: String?

    /// Creates an error for `code` raised by `operation`.
    package init(code: Int32, operation: String = "", path: String? = nil, hint: String? = nil, reason: String? = nil) {
        self.code = code
        self.operation = operation
        self.path = path
        self.reason = reason
        self.hint = hint ?? (reason == nil ? LMDBError.defaultHint(for: code) : nil)
    }

    /// The reason, else the text of `mdb_strerror` for the code.
    package var message: String { reason ?? String(cString: mdb_strerror(code)) }

    /// True for the codes LMDB returns when it meets a damaged page (`MDB_CORRUPTED`,
    /// `MDB_PAGE_NOTFOUND`, `MDB_INVALID`, `MDB_BAD_TXN` after one of those) — never for a
    /// full disk, a full map or a missing key.
    package var isCorruption: Bool {
        code == MDB_CORRUPTED || code == MDB_PAGE_NOTFOUND || code == MDB_INVALID || code == MDB_BAD_TXN
    }

    /// `operation: path: message (hint)`, in the style of the LMDB tools.
    package var description: String {
        var parts: [String] = []
        if !operation.isEmpty { parts.append(operation) }
        if let path { parts.append(path) }
        parts.append(message)
        var text = parts.joined(separator: ": ")
        if let hint { text += " (\(hint))" }
        return text
    }

    /// Errors compare by code only, so `error == .mapFull` ignores context.
    package static func == (lhs: LMDBError, rhs: LMDBError) -> Bool { lhs.code == rhs.code }
    package func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// Lets `catch LMDBError.notFound` match an error with context.
    package static func ~= (pattern: LMDBError, value: any Error) -> Bool {
        (value as? LMDBError)?.code == pattern.code
    }

    /// Whether this process may write files only up to a size (`ulimit -f`).
    private static var fileSizeIsLimited: Bool {
        var limit = rlimit()
        #if canImport(Glibc)
            let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
        #else
            let resource = RLIMIT_FSIZE
        #endif
        return getrlimit(resource, &limit) == 0 && limit.rlim_cur != rlim_t.max
    }

    static func defaultHint(for code: Int32) -> String? {
        switch code {
        case MDB_MAP_FULL: "the map is full: grow the map size"
        case MDB_READERS_FULL: "all reader slots are in use: raise maxReaders or end read transactions sooner"
        case MDB_TXN_FULL: "the transaction has too many dirty pages: commit in smaller chunks"
        case MDB_BAD_VALSIZE: "a key is empty or longer than the maximum key size (511 bytes)"
        case MDB_VERSION_MISMATCH, MDB_INVALID: "the directory does not hold a compatible LMDB environment"
        case ENOSPC: "the disk is full: free space; committed data is intact"
        // LMDB turns a short write into EIO: under a file size limit that is the usual cause.
        case EIO: fileSizeIsLimited
            ? "an I/O error: the file size limit (ulimit -f) may be reached, or the disk be full or failing; committed data is intact"
            : "an I/O error: the disk may be full or failing; committed data is intact"
        case EFBIG: "the file would grow past the file size limit (ulimit -f); committed data is intact"
        case EACCES: "permission denied: check the directory's permissions"
        case MDB_CORRUPTED, MDB_PAGE_NOTFOUND: "the file is damaged: verify it and restore a backup"
        default: nil
        }
    }
}

extension LMDBError {
    /// A key/data pair already exists. The corresponding C error is `MDB_KEYEXIST`.
    package static let keyExists = LMDBError(code: MDB_KEYEXIST)
    /// The key or data was not found. The corresponding C error is `MDB_NOTFOUND`.
    package static let notFound = LMDBError(code: MDB_NOTFOUND)
    /// The environment's map is full. The corresponding C error is `MDB_MAP_FULL`.
    package static let mapFull = LMDBError(code: MDB_MAP_FULL)
    /// Another process grew the map beyond this one's size. The corresponding C error is `MDB_MAP_RESIZED`.
    package static let mapResized = LMDBError(code: MDB_MAP_RESIZED)
    /// All reader slots are taken. The corresponding C error is `MDB_READERS_FULL`.
    package static let readersFull = LMDBError(code: MDB_READERS_FULL)
    /// The transaction has too many dirty pages. The corresponding C error is `MDB_TXN_FULL`.
    package static let txnFull = LMDBError(code: MDB_TXN_FULL)
    /// The maximum number of named databases was reached. The corresponding C error is `MDB_DBS_FULL`.
    package static let dbsFull = LMDBError(code: MDB_DBS_FULL)
    /// A key or value has an unsupported size. The corresponding C error is `MDB_BAD_VALSIZE`.
    package static let badValueSize = LMDBError(code: MDB_BAD_VALSIZE)
    /// The file is not an LMDB environment. The corresponding C error is `MDB_INVALID`.
    package static let invalid = LMDBError(code: MDB_INVALID)
    /// The environment was written by an incompatible LMDB. The corresponding C error is `MDB_VERSION_MISMATCH`.
    package static let versionMismatch = LMDBError(code: MDB_VERSION_MISMATCH)
    /// The database is incompatible with the requested flags. The corresponding C error is `MDB_INCOMPATIBLE`.
    package static let incompatible = LMDBError(code: MDB_INCOMPATIBLE)
    /// The environment is already open in this process. The corresponding C error is `EBUSY`.
    package static let alreadyOpen = LMDBError(code: EBUSY)
    /// The environment was closed: its handle is gone, open it again. `EBADF`, which LMDB's
    /// own calls do not return for a handle in use.
    package static let closed = LMDBError(code: EBADF)
    /// No space is left on the device. The corresponding C error is `ENOSPC`.
    package static let noSpace = LMDBError(code: ENOSPC)
    /// The file or directory does not exist. The corresponding C error is `ENOENT`.
    package static let noSuchFile = LMDBError(code: ENOENT)
    /// Permission denied. The corresponding C error is `EACCES`.
    package static let accessDenied = LMDBError(code: EACCES)
    /// A page was damaged or of the wrong type. The corresponding C error is `MDB_CORRUPTED`.
    package static let corrupted = LMDBError(code: MDB_CORRUPTED)
    /// `MDB_BAD_TXN`: the transaction failed before (any failure inside it, or a damaged page).
    package static let badTransaction = LMDBError(code: MDB_BAD_TXN)
    /// A page number points outside the file. The corresponding C error is `MDB_PAGE_NOTFOUND`.
    package static let pageNotFound = LMDBError(code: MDB_PAGE_NOTFOUND)
    /// A copy stopped by its `isCancelled` (`ECANCELED`).
    package static let cancelled = LMDBError(code: ECANCELED)
}

/// The one place that turns an LMDB return code into a thrown error.
@inline(__always)
func check(_ rc: Int32, _ operation: StaticString, path: String? = nil) throws(LMDBError) {
    guard rc != MDB_SUCCESS else { return }
    // MDB_BAD_TXN follows any earlier failure in the transaction, such as a damaged page met by
    // a cursor: it is thrown like the first error, never trapped on, since bytes on disk cause it.
    throw LMDBError(code: rc, operation: String(describing: operation), path: path)
}
