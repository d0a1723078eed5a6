internal import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Environment {
    /// The prefix of the temporary file a copy writes before renaming it to `data.mdb`.
    public static let partialCopyPrefix = ".data.mdb.partial-"

    /// Writes a consistent copy of the environment into the directory `destination` (created
    /// if missing; it must not hold an environment), while reads and writes go on.
    ///
    /// The copy is atomic: it is written to a temporary file in `destination` (mode 0600, or
    /// `options.fileMode`), synced, and renamed to `data.mdb`, and the directory is synced. A
    /// copy that fails or is killed leaves no `data.mdb` behind, only a temporary file whose
    /// name starts with ``partialCopyPrefix``, which a later copy removes.
    ///
    /// - Parameter compact: omits free pages and renumbers pages (`MDB_CP_COMPACT`).
    /// The corresponding C function is `mdb_env_copyfd2`.
    public func copy(to destination: String, compact: Bool = false) throws(LMDBError) {
        try ensureOpen("mdb_env_copyfd2")
        if mkdir(destination, 0o700) != 0 && errno != EEXIST {
            throw LMDBError(code: errno, operation: "mkdir", path: destination)
        }
        let target = destination + "/data.mdb"
        if access(target, F_OK) == 0 {
            throw LMDBError(
                code: EEXIST, operation: "mdb_env_copyfd2", path: destination,
                hint: "the destination already holds an environment")
        }
        Environment.removePartialCopies(in: destination)
        var template = Array((destination + "/" + Environment.partialCopyPrefix + "XXXXXX").utf8CString)
        // mkstemp creates the file 0600 whatever the umask; fchmod applies a wider fileMode.
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        if fd < 0 { throw LMDBError(code: errno, operation: "mkstemp", path: destination) }
        let temporary = String(decoding: template.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var renamed = false
        defer {
            if !renamed { unlink(temporary) }
        }
        try writeCopy(to: fd, compact: compact, destination: destination)
        // rename(2) would replace a data.mdb created meanwhile; link(2) refuses to.
        if link(temporary, target) != 0 {
            let code = errno
            throw LMDBError(
                code: code, operation: "link", path: destination,
                hint: code == EEXIST ? "the destination already holds an environment" : nil)
        }
        unlink(temporary)
        renamed = true
        Environment.syncDirectory(destination)
    }

    /// Copies into `fd`, syncs and closes it.
    private func writeCopy(to fd: Int32, compact: Bool, destination: String) throws(LMDBError) {
        defer { Glibc.close(fd) }
        if options.fileMode != 0o600 { _ = fchmod(fd, options.fileMode) }
        // The copy runs its own read transaction: keep the map still meanwhile.
        gate.enterShared()
        let rc = mdb_env_copyfd2(handle, fd, compact ? UInt32(MDB_CP_COMPACT) : 0)
        gate.leaveShared()
        try check(rc, "mdb_env_copyfd2", path: destination)
        if fsync(fd) != 0 { throw LMDBError(code: errno, operation: "fsync", path: destination) }
    }

    /// Removes temporary files that a killed copy left in `directory`.
    static func removePartialCopies(in directory: String) {
        guard let dir = opendir(directory) else { return }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.hasPrefix(partialCopyPrefix) { names.append(name) }
        }
        closedir(dir)
        for name in names { unlink(directory + "/" + name) }
    }

    /// Makes a new directory entry durable (`fsync` of the directory).
    static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        Glibc.close(fd)
    }
}
