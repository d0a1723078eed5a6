internal import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Environment {
    /// The prefix of the temporary file a copy writes before renaming it to `data.mdb`.
    package static let partialCopyPrefix = ".data.mdb.partial-"

    /// Writes a consistent copy of the environment into the directory `destination` (created
    /// if missing; it must not hold an environment), while reads and writes go on.
    ///
    /// The copy is atomic: it is written to a temporary file in `destination` (mode 0600, or
    /// `options.fileMode`), synced, and renamed to `data.mdb`, and the directory is synced. A
    /// copy that fails or is killed leaves no `data.mdb` behind, only a temporary file whose
    /// name starts with ``partialCopyPrefix``, which a later copy removes.
    ///
    /// - Parameters:
    ///   - compact: omits free pages and renumbers pages (`MDB_CP_COMPACT`).
    ///   - isCancelled: polled about every 0.1 s while the copy runs; true stops it, removes the
    ///     temporary file and throws `ECANCELED`. With it, LMDB writes into a pipe that this
    ///     thread drains into the file, so that the copy can be stopped midway.
    /// The corresponding C function is `mdb_env_copyfd2`.
    package func copy(to destination: String, compact: Bool = false, isCancelled: (() -> Bool)? = nil)
        throws(LMDBError)
    {
        try ensureOpen("mdb_env_copyfd2")
        if compact {
            // A compacting copy walks every node trusting the page headers: a damaged bound
            // overran its buffers (heap corruption). A plain copy takes the pages as they are.
            let problems: [String]
            do {
                problems = try read { txn in try txn.pageStructureProblems(limit: 1, isCancelled: isCancelled ?? { false }) }
            } catch let error as LMDBError {
                throw error
            } catch {
                throw LMDBError(code: MDB_PANIC, operation: "mdb_env_copyfd2", path: path, hint: "\(error)")
            }
            if let first = problems.first {
                throw LMDBError(
                    code: MDB_CORRUPTED, operation: "mdb_env_copyfd2", path: path,
                    hint: "\(first); a compacting copy would read past it (quire verify lists the damage; a copy without --compact takes the pages as they are)")
            }
        }
        let (fd, temporary, createdDirectory) = try Environment.beginCopyFile(in: destination, operation: "mdb_env_copyfd2")
        var renamed = false
        defer {
            Glibc.close(fd)
            if !renamed { unlink(temporary) }
        }
        // mkstemp creates the file 0600 whatever the umask; fchmod applies a wider fileMode.
        if options.fileMode != 0o600 { _ = fchmod(fd, options.fileMode) }
        // A map another process grew meanwhile: LMDB's own read transaction meets it at its
        // begin; the size is adopted and the copy starts over, as every read's begin does.
        var adoptions = 0
        while true {
            do throws(LMDBError) {
                if let isCancelled {
                    try writeCancellableCopy(
                        to: fd, compact: compact, destination: destination,
                        made: (temporary, createdDirectory ? destination : nil), isCancelled: isCancelled)
                } else {
                    try writeCopy(to: fd, compact: compact, destination: destination)
                }
                break
            } catch where error.code == MDB_MAP_RESIZED {
                try adoptMapSize(attempt: &adoptions)
                guard ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
                    throw LMDBError(code: errno, operation: "ftruncate", path: destination)
                }
            }
        }
        try Environment.finishCopyFile(fd, temporary: temporary, in: destination)
        renamed = true
    }

    /// The file a copy into `destination` is written to (the directory made when absent; it
    /// must hold no environment): its descriptor, its temporary name, which no command takes for
    /// a store and the next copy removes if this one is killed, and whether the directory was made.
    package static func beginCopyFile(in destination: String, operation: String) throws(LMDBError)
        -> (fd: Int32, temporary: String, createdDirectory: Bool)
    {
        let createdDirectory = mkdir(destination, 0o700) == 0
        if !createdDirectory && errno != EEXIST {
            throw LMDBError(code: errno, operation: "mkdir", path: destination)
        }
        if access(destination + "/data.mdb", F_OK) == 0 {
            throw LMDBError(code: EEXIST, operation: operation, path: destination, hint: "the destination already holds an environment")
        }
        try removePartialCopies(in: destination)
        var template = Array((destination + "/" + partialCopyPrefix + "XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        if fd < 0 { throw LMDBError(code: errno, operation: "mkstemp", path: destination) }
        // Held until the descriptor closes: a copy into the same directory meanwhile sees it.
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 1
        _ = fcntl(fd, F_SETLK, &lock)
        return (fd, filledTemplate(template), createdDirectory)
    }

    /// Makes the copy written to `fd` durable and links it into `destination` as `data.mdb`,
    /// then drops its temporary name: the copy appears whole or not at all.
    package static func finishCopyFile(_ fd: Int32, temporary: String, in destination: String) throws(LMDBError) {
        if fsync(fd) != 0 { throw LMDBError(code: errno, operation: "fsync", path: destination) }
        // rename(2) would replace a data.mdb created meanwhile; link(2) refuses to.
        if link(temporary, destination + "/data.mdb") != 0 {
            let code = errno
            throw LMDBError(
                code: code, operation: "link", path: destination,
                hint: code == EEXIST ? "the destination already holds an environment" : nil)
        }
        unlink(temporary)
        syncDirectory(destination)
    }

    /// Copies into `fd`.
    private func writeCopy(to fd: Int32, compact: Bool, destination: String) throws(LMDBError) {
        // The copy runs its own read transaction: keep the map still meanwhile.
        try enterGateOpen("mdb_env_copyfd2")
        let rc = mdb_env_copyfd2(handle, fd, compact ? UInt32(MDB_CP_COMPACT) : 0)
        gate.leaveShared()
        try check(rc, "mdb_env_copyfd2", path: destination)
    }

    /// Copies through a pipe: a thread runs `mdb_env_copyfd2` into its write end while this one
    /// moves the bytes into `fd`, checking `isCancelled` between reads. Closing the read end
    /// makes LMDB's next write fail (`EPIPE`; SIGPIPE must be ignored, as `quire` does), which
    /// ends its copy.
    /// `made` is what the copy created (its temporary file, its directory when new), removed
    /// by an exit during the writer-lock wait.
    private func writeCancellableCopy(
        to fd: Int32, compact: Bool, destination: String, made: (file: String, directory: String?),
        isCancelled: () -> Bool
    ) throws(LMDBError) {
        var ends: [Int32] = [0, 0]
        if pipe(&ends) != 0 { throw LMDBError(code: errno, operation: "pipe", path: destination) }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        let job = CopyJob(environment: handle, fd: writeEnd, flags: compact ? UInt32(MDB_CP_COMPACT) : 0)
        do {
            try enterGateOpen("mdb_env_copyfd2")
        } catch {
            Glibc.close(readEnd)
            Glibc.close(writeEnd)
            throw error
        }
        // A plain copy takes the writer lock while it reads the meta pages: a wait for another
        // process's writer is told and ended by a first signal, as a write's (its first bytes
        // through the pipe end it). A compacting copy takes no lock.
        var waitsForWriter = !compact
        if waitsForWriter {
            // The exit that a first signal makes of a long wait skips every cleanup below.
            WaitExitCleanup.register(file: made.file, directory: made.directory)
            WriterLockWait.began()
        }
        defer {
            if waitsForWriter {
                WriterLockWait.ended()
                WaitExitCleanup.clear()
            }
        }
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { raw in
            let job = Unmanaged<CopyJob>.fromOpaque(raw!).takeRetainedValue()
            job.rc = mdb_env_copyfd2(job.environment, job.fd, job.flags)
            Glibc.close(job.fd)
            return nil
        }, Unmanaged.passRetained(job).toOpaque())
        if started != 0 {
            gate.leaveShared()
            Glibc.close(readEnd)
            Glibc.close(writeEnd)
            throw LMDBError(code: started, operation: "pthread_create", path: destination)
        }
        var failure: LMDBError?
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            if isCancelled() {
                failure = LMDBError(code: ECANCELED, operation: "copy", path: destination, hint: "the copy was cancelled")
                break
            }
            var descriptor = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 100)
            if ready < 0 && errno != EINTR {
                failure = LMDBError(code: errno, operation: "poll", path: destination)
                break
            }
            if ready <= 0 { continue }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(readEnd, $0.baseAddress, $0.count) }
            if n > 0 && waitsForWriter {
                WriterLockWait.ended()
                WaitExitCleanup.clear()
                waitsForWriter = false
            }
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                failure = LMDBError(code: errno, operation: "read", path: destination)
                break
            }
            var offset = 0
            while offset < n {
                let w = buffer.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, n - offset) }
                if w < 0 {
                    if errno == EINTR { continue }
                    failure = LMDBError(code: errno, operation: "write", path: destination)
                    break
                }
                offset += w
            }
            if failure != nil { break }
        }
        Glibc.close(readEnd)
        pthread_join(thread, nil)
        gate.leaveShared()
        if let failure { throw failure }
        try check(job.rc, "mdb_env_copyfd2", path: destination)
    }

    /// What the copying thread needs, and what it returns.
    private final class CopyJob: @unchecked Sendable {
        // @unchecked: written by the copying thread before it ends, read after pthread_join.
        let environment: OpaquePointer
        let fd: Int32
        let flags: UInt32
        var rc: Int32 = 0

        init(environment: OpaquePointer, fd: Int32, flags: UInt32) {
            self.environment = environment
            self.fd = fd
            self.flags = flags
        }
    }

    /// Removes temporary files (and staging directories) that a killed copy left in `directory`;
    /// throws `EBUSY` when another process's copy into it is still under way (a second copy
    /// removed the first one's file, which then failed with "No such file or directory").
    package static func removePartialCopies(in directory: String) throws(LMDBError) {
        let partial = (directoryNames(directory) ?? []).filter { $0.hasPrefix(partialCopyPrefix) }.map { directory + "/" + $0 }
        if partial.contains(where: isWrittenByAnother) {
            throw LMDBError(code: EBUSY, operation: "copy", path: directory, hint: "another copy into this directory is under way")
        }
        for path in partial { removeTree(path) }
    }

    /// Whether another process still writes the partial copy at `path`: it holds the lock that
    /// ``beginCopyFile(in:operation:)`` takes on the file, or, in a staging directory, on a file
    /// in it (LMDB keeps one on `lock.mdb` while an environment is open).
    private static func isWrittenByAnother(_ path: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { return isLockedByAnother(path) == true }
        return (directoryNames(path) ?? []).contains { isLockedByAnother(path + "/" + $0) == true }
    }

    /// Whether a process other than this one holds a lock on the first byte of `file` (asked
    /// with `F_GETLK`, which takes none); nil when it cannot be asked (`errno` says why when the
    /// file could not be opened).
    static func isLockedByAnother(_ file: String) -> Bool? {
        let fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var probe = flock()
        probe.l_type = Int16(F_WRLCK)
        probe.l_whence = Int16(SEEK_SET)
        probe.l_start = 0
        probe.l_len = 1
        guard fcntl(fd, F_GETLK, &probe) == 0 else { return nil }
        return probe.l_type != Int16(F_UNLCK)
    }

    /// Makes the directory in `destination` where a copy that is worked on before it appears (a
    /// compacted store's records rewritten) is made: named like a killed copy's leftovers, so
    /// that the next copy removes it and no command takes it for the store.
    package static func makeStagingDirectory(in destination: String) throws(LMDBError) -> String {
        // mkdtemp: a name of its own, so two copies at once never share one.
        var template = Array((destination + "/" + partialCopyPrefix + "staged-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw LMDBError(code: errno, operation: "mkdtemp", path: destination)
        }
        return filledTemplate(template)
    }

    /// The path `mkstemp` or `mkdtemp` wrote into `template` (its `XXXXXX` filled in).
    static func filledTemplate(_ template: [CChar]) -> String {
        String(decoding: template.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Links the data file of the copy finished in `staging` into `destination` as `data.mdb`
    /// (refused when one is there), makes the entry durable and removes `staging`: the copy
    /// appears whole or not at all.
    package static func publishStagedCopy(_ staging: String, to destination: String) throws(LMDBError) {
        if link(staging + "/data.mdb", destination + "/data.mdb") != 0 {
            let code = errno
            throw LMDBError(
                code: code, operation: "link", path: destination,
                hint: code == EEXIST ? "the destination already holds an environment" : nil)
        }
        syncDirectory(destination)
        removeTree(staging)
    }

    /// Removes `path`: a file, or a directory and what it holds.
    package static func removeTree(_ path: String) {
        guard unlink(path) != 0, errno == EISDIR || errno == EPERM else { return }
        for name in directoryNames(path) ?? [] { removeTree(path + "/" + name) }
        rmdir(path)
    }

    /// Makes a new directory entry durable (`fsync` of the directory).
    package static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        Glibc.close(fd)
    }
}
