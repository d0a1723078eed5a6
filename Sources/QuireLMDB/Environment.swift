internal import CLMDB
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An LMDB environment: one directory holding a memory-mapped B-tree file and its lock file.
///
/// The environment is opened with `MDB_NOTLS`, so a read transaction belongs to its object, not
/// to an OS thread, and reads run on any thread or task. Reads and writes are closure-scoped:
/// `read { txn in … }` and `write { txn in … }`; transaction handles cannot escape the closure.
///
/// ## LMDB limitations
/// - Open a directory once per process (a second open throws `LMDBError.alreadyOpen`).
/// - Keep read transactions short: a long reader keeps old pages from being reused.
/// - Don't start a read or write inside another read or write closure on the same thread.
/// - Values seen inside a closure are views of the map, valid only inside it.
/// - Keys are at most `maxKeySize` (511) bytes and never empty.
package final class Environment: @unchecked Sendable {
    // @unchecked: the C handle is thread-safe for the uses below (LMDB serializes writers, and
    // MDB_NOTLS readers are independent); the mutable Swift state is behind Mutex or ReaderGate.

    /// The canonical path of the environment directory.
    package let path: String
    /// The options it was opened with.
    package let options: EnvironmentOptions
    /// True when a read-only open could not use the lock file and reads without LMDB's reader
    /// table (`MDB_NOLOCK`): a writer in another process may then reuse pages this one reads.
    package let isLockless: Bool

    let handle: OpaquePointer
    /// The directory's key in the process-wide registry of open environments.
    private let identity: OpenRegistry.Identity
    /// Its slot in ``MappedRegions`` (nil when all were taken).
    private let mappedRegion: Int?
    let gate: ReaderGate
    let readerPool: ReadTransactionPool
    private let stateLock = ThreadLock()
    /// Held around a read-only open's whole transaction: LMDB forbids opening databases from
    /// two transactions at once (two could get one slot, and one collection read another's).
    private let databaseOpenLock = ThreadLock()
    /// Set once by `close()`; an atomic, not part of `State`, because every transaction checks it
    /// (a lock taken by every read on every core would pass its cache line between them).
    private let closed = Atomic<Bool>(false)
    /// Set when a remap failed: LMDB then has no map (`mdb_env_set_mapsize` unmaps the old one
    /// first), and any transaction would read unmapped memory.
    private let unmapped = Atomic<Bool>(false)
    private var stateValue = State()
    /// The bytes the data file needed at the last full look at its meta pages, and when that
    /// was (``dataFileProblem()``).
    private let fileCheck = Mutex<(required: UInt64, at: ContinuousClock.Instant?)>((0, nil))
    /// Serializes write transactions and the map changes they trigger within this process.
    let writeLock = ThreadLock()
    /// When a writer last cleared the reader slots of dead processes (under ``writeLock``).
    private let lastReaderCheck = Mutex<ContinuousClock.Instant?>(nil)

    private struct State {
        var databases: [String: Database] = [:]
        var growCount = 0
    }

    /// Opens (and by default creates) the environment at `path`.
    ///
    /// Clears reader slots left by dead processes (`mdb_reader_check`).
    /// - Throws: `LMDBError.alreadyOpen` when this process has it open; `LMDBError.noSuchFile`
    ///   for a missing read-only environment; any `mdb_env_open` error.
    package init(path: String, options: EnvironmentOptions = EnvironmentOptions()) throws(LMDBError) {
        try options.validate(path: path)
        if !options.readOnly && options.createDirectory {
            if mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw LMDBError(code: errno, operation: "mkdir", path: path)
            }
        }
        guard let resolved = realpath(path, nil) else {
            throw LMDBError(
                code: errno, operation: "open", path: path,
                hint: errno == ENOENT ? "no environment at this path" : nil)
        }
        let canonical = String(cString: resolved)
        free(resolved)

        guard let identity = OpenRegistry.Identity(directory: canonical) else {
            throw LMDBError(code: errno, operation: "open", path: canonical)
        }
        guard OpenRegistry.claim(identity) else {
            throw LMDBError(
                code: EBUSY, operation: "open", path: canonical,
                hint: "the environment is already open in this process (perhaps under another path: a bind mount or a link); share the open instance")
        }
        let opened: (handle: OpaquePointer, lockless: Bool)
        do throws(LMDBError) {
            try Environment.checkRoomForLockFile(in: canonical)
            if !options.readOnly && access(canonical + "/data.mdb", F_OK) != 0 {
                try Environment.createDataFile(in: canonical, options)
            }
            try DataFileCheck.check(directory: canonical)
            opened = try Environment.openWithFallback(canonical, options)
            if !options.readOnly { AbandonedCreations.remove(in: canonical) }
        } catch {
            OpenRegistry.release(identity)
            throw Environment.explain(error, canonical, readOnly: options.readOnly)
        }
        self.handle = opened.handle
        self.identity = identity
        self.isLockless = opened.lockless
        self.path = canonical
        self.options = options
        // Leave a few slots of the shared reader table to other processes.
        let readerLimit = max(1, options.maxReaders - 8)
        self.gate = ReaderGate(limit: readerLimit)
        // Idle transactions keep their reader slots: no more of them than may be active at once.
        self.readerPool = ReadTransactionPool(capacity: min(64, readerLimit))
        // Claimed last, when nothing can fail any more (a failed open would keep its slot).
        self.mappedRegion = MappedRegions.claim()
        MappedRegions.update(mappedRegion, handle: opened.handle, mapped: true)
    }

    /// Throws ENOSPC when `path` has no `lock.mdb` yet and its file system has no room for one.
    /// LMDB extends a new lock file and writes into its mapping: on a full file system that write
    /// is a SIGBUS, which looked like a damaged store to every command.
    static func checkRoomForLockFile(in path: String) throws(LMDBError) {
        guard access(path + "/lock.mdb", F_OK) != 0, access(path, W_OK) == 0 else { return }
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return }
        let available = UInt64(info.f_bavail) * UInt64(info.f_frsize)
        // A lock file is a few pages (8 KiB for 126 readers); a little more for the data file's
        // growth when the store is new.
        if available < 256 << 10 {
            throw LMDBError(
                code: ENOSPC, operation: "open", path: path,
                hint: access(path + "/data.mdb", F_OK) == 0
                    ? "no room on the file system to open the store (\(available) bytes free, under the 256 KiB its lock file and first pages need); the store itself is untouched: free some space and run again"
                    : "no room on the file system to make a store (\(available) bytes free, under the 256 KiB its lock file and first pages need); nothing was written: free some space and run again")
        }
    }

    /// The prefix of the directory a new environment is made in before its data file is linked
    /// into place.
    package static let creationPrefix = ".lmdb-create-"

    /// Makes a new environment's data file atomically: LMDB initializes it (its two meta pages)
    /// in a temporary directory inside `path`, it is synced and then linked to `path/data.mdb`.
    /// A process killed meanwhile leaves no `data.mdb` (an empty or half-written one could not
    /// be told from a damaged store), only the temporary directory. When another process linked
    /// its file first, that one is used.
    private static func createDataFile(in path: String, _ options: EnvironmentOptions) throws(LMDBError) {
        do {
            try createDataFile(in: path, options, initialize: { _ in }, rawOnly: true)
        } catch let error as LMDBError {
            throw error
        } catch {
            throw LMDBError(code: EINVAL, operation: "create", path: path, hint: "\(error)")
        }
    }

    /// Creates the environment at `path` when it has no data file yet, running `initialize` on
    /// it before it appears there: it is built in a temporary directory inside `path` (created
    /// if missing) and linked into place, so what `initialize` writes (a store's metadata) is
    /// there from the first moment any process can open the file. Does nothing when `path`
    /// already holds a data file, or when another process links one first.
    package static func create(
        at path: String, options: EnvironmentOptions = EnvironmentOptions(),
        initialize: (Environment) throws -> Void
    ) throws {
        try options.validate(path: path)
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw LMDBError(code: errno, operation: "mkdir", path: path)
        }
        guard access(path + "/data.mdb", F_OK) != 0 else { return }
        try checkRoomForLockFile(in: path)
        try createDataFile(in: path, options, initialize: initialize, rawOnly: false)
    }

    private static func createDataFile(
        in path: String, _ options: EnvironmentOptions, initialize: (Environment) throws -> Void, rawOnly: Bool
    ) throws {
        var template = Array((path + "/" + creationPrefix + "XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        guard made else { throw LMDBError(code: errno, operation: "mkdtemp", path: path) }
        let temporary = filledTemplate(template)
        defer { AbandonedCreations.removeStaging(temporary) }
        var creating = options
        creating.readOnly = false
        if !rawOnly {
            // A full environment on the temporary directory (it has a data file by then, so
            // this open does not come back here).
            let handle = try openHandle(temporary, creating, lockless: false)
            mdb_env_close(handle)
            let env = try Environment(path: temporary, options: creating)
            do {
                try initialize(env)
                try env.sync(force: true)
            } catch {
                env.close()
                throw error
            }
            env.close()
        } else {
            let env = try openHandle(temporary, creating, lockless: false)
            let synced = mdb_env_sync(env, 1)
            mdb_env_close(env)
            try check(synced, "mdb_env_sync", path: path)
        }
        if link(temporary + "/data.mdb", path + "/data.mdb") != 0 && errno != EEXIST {
            throw LMDBError(code: errno, operation: "link", path: path)
        }
        Environment.syncDirectory(path)
    }

    /// Opens the handle; read-only, when the lock file cannot be opened for writing (a store
    /// owned by someone else, a read-only copy), reads without LMDB's reader table (`MDB_NOLOCK`).
    private static func openWithFallback(_ path: String, _ options: EnvironmentOptions)
        throws(LMDBError) -> (handle: OpaquePointer, lockless: Bool)
    {
        do {
            return (try openHandle(path, options, lockless: false), false)
        } catch where error.code == EACCES && options.readOnly && canRead(path) {
            return (try openHandle(path, options, lockless: true), true)
        }
    }

    /// Creates and opens one `MDB_env`; closes it again when opening fails.
    private static func openHandle(_ path: String, _ options: EnvironmentOptions, lockless: Bool)
        throws(LMDBError) -> OpaquePointer
    {
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create", path: path)
        guard let env else { throw LMDBError(code: ENOMEM, operation: "mdb_env_create") }
        LMDBAssertionHook.attach(to: env)
        do throws(LMDBError) {
            try check(mdb_env_set_mapsize(env, options.mapSize), "mdb_env_set_mapsize", path: path)
            try check(mdb_env_set_maxdbs(env, MDB_dbi(options.maxDatabases)), "mdb_env_set_maxdbs")
            try check(mdb_env_set_maxreaders(env, UInt32(options.maxReaders)), "mdb_env_set_maxreaders")
            var flags = UInt32(MDB_NOTLS)
            if options.readOnly { flags |= UInt32(MDB_RDONLY) }
            if lockless { flags |= UInt32(MDB_NOLOCK) }
            switch options.durability {
            case .durable: break
            case .noMetaSync: flags |= UInt32(MDB_NOMETASYNC)
            case .relaxed: flags |= UInt32(MDB_NOSYNC)
            }
            if !lockless { try LockFileSpace.reserve(in: path, maxReaders: options.maxReaders, mode: options.fileMode) }
            // > If this function fails, mdb_env_close() must be called to discard the MDB_env handle.
            try check(mdb_env_open(env, path, flags, options.fileMode), "mdb_env_open", path: path)
            var dead: Int32 = 0
            try check(mdb_reader_check(env, &dead), "mdb_reader_check", path: path)
        } catch {
            mdb_env_close(env)
            throw error
        }
        return env
    }

    /// Clears the reader slots of processes that died (`mdb_reader_check`), at most once a
    /// second: a killed reader's slot held its snapshot's pages from reuse, so a long load beside
    /// it grew the file to more than twice its size, for good. Called as a write begins.
    func clearDeadReadersIfDue() {
        guard !isLockless else { return }
        let now = ContinuousClock.now
        let due = lastReaderCheck.withLock { last in
            guard last.map({ now - $0 >= .seconds(1) }) ?? true else { return false }
            last = now
            return true
        }
        var dead: Int32 = 0
        if due { _ = mdb_reader_check(handle, &dead) }
    }

    /// True when the data file can be read (so only the lock file stands in the way).
    private static func canRead(_ path: String) -> Bool {
        access(path + "/data.mdb", R_OK) == 0
    }

    /// Gives a permission error a hint naming the file that is in the way.
    private static func explain(_ error: LMDBError, _ path: String, readOnly: Bool) -> LMDBError {
        guard error.code == EACCES else { return error }
        let hint: String
        if access(path + "/data.mdb", F_OK) == 0 && access(path + "/data.mdb", readOnly ? R_OK : R_OK | W_OK) != 0 {
            hint = "permission denied: data.mdb is not \(readOnly ? "readable" : "readable and writable") for this user"
        } else if access(path + "/lock.mdb", F_OK) == 0 && access(path + "/lock.mdb", R_OK | W_OK) != 0 {
            hint = "permission denied: lock.mdb is not writable for this user; read-only commands still work"
        } else if access(path, W_OK) != 0 && !readOnly {
            hint = "permission denied: the directory is not writable for this user"
        } else {
            return error
        }
        return LMDBError(code: error.code, operation: error.operation, path: error.path, hint: hint)
    }

    deinit {
        closeNow()
    }

    /// Closes the environment. Waits for running reads to finish; later calls throw.
    /// Closing twice is harmless. The corresponding C function is `mdb_env_close`.
    package func close() {
        precondition(!isInsideRead, "QuireLMDB: close() inside a read of the same environment would wait for itself; close after the read returns")
        closeNow()
    }

    private func closeNow() {
        guard closed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return
        }
        writeLock.withLock {
            gate.withExclusive {
                readerPool.drain()
                MappedRegions.release(mappedRegion)
                mdb_env_close(handle)
            }
        }
        OpenRegistry.release(identity)
    }

    private func withState<R>(_ body: (inout State) -> R) -> R {
        stateLock.withLock { body(&stateValue) }
    }

    /// True while the calling thread is inside a read of this environment.
    package var isInsideRead: Bool { gate.isHeldByThisThread }

    /// True once `close()` has run.
    package var isClosed: Bool { closed.load(ordering: .acquiring) }

    func ensureOpen(_ operation: String) throws(LMDBError) {
        if isClosed {
            throw LMDBError(code: EBADF, operation: operation, path: path, hint: "the environment is closed")
        }
        if unmapped.load(ordering: .acquiring) {
            throw LMDBError(
                code: ENOMEM, operation: operation, path: path,
                hint: "the map could not be remapped (no address space left?): this process cannot use the store any more; what was committed is safe")
        }
    }

    /// Remaps the environment to `size` bytes (0: the size in the file); a failure leaves it
    /// without a map, so every later use throws instead of reading unmapped memory.
    /// Call it with the gate held exclusively. The corresponding C function is `mdb_env_set_mapsize`.
    func remap(to size: Int) throws(LMDBError) {
        let rc = mdb_env_set_mapsize(handle, size)
        // EINVAL comes before LMDB unmaps anything (a transaction of this process is active).
        if rc != MDB_SUCCESS && rc != EINVAL { unmapped.store(true, ordering: .releasing) }
        MappedRegions.update(mappedRegion, handle: handle, mapped: !unmapped.load(ordering: .acquiring))
        try check(rc, "mdb_env_set_mapsize", path: path)
    }

    /// Enters the reader gate for work on the handle, or throws, having left it, when the
    /// environment is closed. Checked inside the gate: `close()` waits for the readers in it, so
    /// a check made before entering could pass for a close that then frees the handle.
    func enterGateOpen(_ operation: String) throws(LMDBError) {
        gate.enterShared()
        if isClosed || unmapped.load(ordering: .acquiring) {
            gate.leaveShared()
            try ensureOpen(operation)
        }
    }

    /// Runs `body` on the open environment: inside the reader gate, which `close()` (and a
    /// remap) waits to have to itself, so the handle is not freed under it.
    private func withOpenHandle<R>(_ operation: String, _ body: () throws(LMDBError) -> R) throws(LMDBError) -> R {
        try enterGateOpen(operation)
        defer { gate.leaveShared() }
        return try body()
    }

    /// The largest key LMDB accepts (0 once closed). The corresponding C function is
    /// `mdb_env_get_maxkeysize`.
    package var maxKeySize: Int { (try? withOpenHandle("mdb_env_get_maxkeysize") { Int(mdb_env_get_maxkeysize(handle)) }) ?? 0 }

    /// How many times this process grew the map.
    package var mapGrowthCount: Int { withState { $0.growCount } }

    func noteGrowth() { withState { $0.growCount += 1 } }

    /// Opens a named database once and caches its handle; `nil` names the main database.
    ///
    /// Runs in its own write transaction (or a read transaction when read-only), as
    /// lmdb.h requires: "This function must not be called from multiple concurrent transactions".
    /// Don't call it inside a `write` closure.
    /// - Throws: `LMDBError.notFound` when the database does not exist and `flags` lacks `.create`
    ///   (always the case read-only); `LMDBError.dbsFull`; `LMDBError.incompatible`.
    package func openDatabase(_ name: String?, flags: DatabaseFlags = [.create]) throws(LMDBError) -> Database {
        try ensureOpen("mdb_dbi_open")
        let cacheKey = name ?? ""
        if let cached = withState({ $0.databases[cacheKey] }) { return cached }
        var openFlags = flags
        if options.readOnly { openFlags.remove(.create) }
        let dbi: MDB_dbi
        do {
            if options.readOnly {
                // Taken before the gate: the holder may leave the gate to adopt a grown map,
                // and no one waits for the lock while inside the gate.
                dbi = try databaseOpenLock.withLock { () throws(LMDBError) in try openDatabaseReadOnly(name, openFlags) }
            } else {
                dbi = try write { (txn: borrowing WriteTransaction) throws(LMDBError) -> MDB_dbi in
                    // Creating a database writes the main database: through the transaction's
                    // check, so that a full map grows and the open runs again.
                    var opened: MDB_dbi = 0
                    try txn.raw.check(Environment.openDBI(txn.raw.txn, name, openFlags, &opened), "mdb_dbi_open")
                    return opened
                }
            }
        } catch let error as LMDBError {
            throw error
        } catch {
            throw LMDBError(code: EINVAL, operation: "mdb_dbi_open", path: path, hint: "\(error)")
        }
        let database = Database(dbi: dbi, name: name, flags: flags.subtracting(.create))
        withState { $0.databases[cacheKey] = database }
        return database
    }

    /// Opens a database in a read-only transaction and commits it (> "The database handle will
    /// be private to the current transaction until the transaction is successfully committed").
    /// Call it holding `databaseOpenLock`: the transaction begins inside it too, since LMDB
    /// counts the open databases when a transaction begins, and two begun at once would give
    /// two names one slot.
    private func openDatabaseReadOnly(_ name: String?, _ openFlags: DatabaseFlags) throws(LMDBError) -> MDB_dbi {
        try enterGateOpen("mdb_txn_begin")
        defer { gate.leaveShared() }
        var txn: OpaquePointer?
        var adoptions = 0
        var rc = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
        while rc == MDB_MAP_RESIZED {
            // Another process grew the map (or a damaged meta page says so): adopted outside
            // the gate, which a remap needs to itself; back inside (the defer above leaves it),
            // the environment must still be open.
            gate.leaveShared()
            let adopted = Result { () throws(LMDBError) in try adoptMapSize(attempt: &adoptions) }
            gate.enterShared()
            try adopted.get()
            try ensureOpen("mdb_txn_begin")
            rc = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
        }
        try check(rc, "mdb_txn_begin", path: path)
        guard let txn else { preconditionFailure("mdb_txn_begin returned no transaction") }
        var opened: MDB_dbi = 0
        let openRC = Environment.openDBI(txn, name, openFlags, &opened)
        if openRC != MDB_SUCCESS {
            mdb_txn_abort(txn)
            try check(openRC, "mdb_dbi_open", path: path)
        }
        try check(mdb_txn_commit(txn), "mdb_txn_commit", path: path)
        return opened
    }

    /// Drops the cached handle of a database `mdb_drop` deleted and closed: a later open of its
    /// name must open it again, and the handle may name another database by then (LMDB gives
    /// its slot to the next one opened).
    func forget(_ database: Database) {
        withState { state in state.databases = state.databases.filter { $0.value.dbi != database.dbi } }
    }

    private static func openDBI(
        _ txn: OpaquePointer, _ name: String?, _ flags: DatabaseFlags, _ dbi: inout MDB_dbi
    ) -> Int32 {
        if let name { mdb_dbi_open(txn, name, flags.rawValue, &dbi) } else { mdb_dbi_open(txn, nil, flags.rawValue, &dbi) }
    }

    /// Why the data file cannot be read now, or nil: it no longer holds every page its newest
    /// meta page names (cut short in place while open), or its meta pages are not LMDB's any
    /// more (overwritten). Read with `fstat` and `pread`, not through the map, so it can be
    /// asked before a read that would fault on the missing pages. An `fstat` against the size
    /// the last full look found; the meta pages themselves are read again when the file is
    /// shorter than that, or every 50 ms (pages committed since then, damage at the start).
    /// Whether the data file in `directory` is empty or cut short of what its meta pages need
    /// (see ``dataFileProblem()`` for an open environment's).
    package static func dataFileIsCutShort(directory: String) -> Bool {
        DataFileCheck.isCutShort(directory: directory)
    }

    package func dataFileProblem() -> LMDBError? {
        (try? withOpenHandle("mdb_env_get_fd") { () -> LMDBError? in
            var descriptor: Int32 = -1
            var info = stat()
            guard mdb_env_get_fd(handle, &descriptor) == 0, fstat(descriptor, &info) == 0 else { return nil }
            let size = UInt64(info.st_size)
            let now = ContinuousClock.now
            let recent = fileCheck.withLock { check in
                guard size >= check.required, let at = check.at, now - at < .milliseconds(50) else { return false }
                return true
            }
            if recent { return nil }
            let meta = DataFileCheck.newestMeta(fd: descriptor, fileSize: size)
            // Only a sound look is remembered: a damaged file is looked at again every time.
            fileCheck.withLock { $0 = meta.flatMap { size >= $0.requiredSize ? ($0.requiredSize, now) : nil } ?? (0, nil) }
            guard let meta else {
                return LMDBError(
                    code: MDB_INVALID, operation: "read", path: path,
                    reason: "data.mdb no longer starts with LMDB's meta pages (damaged at its start)")
            }
            guard size >= meta.requiredSize else {
                return DataFileCheck.truncated(path: path, size: size, required: meta.requiredSize)
            }
            return nil
        }) ?? nil
    }

    /// The id of the last committed write transaction (of any process): one look at the meta
    /// pages, no reader table walk, cheap enough to ask on every request. Not to be called
    /// inside a read transaction of this environment (see ``info()``).
    package func lastTransactionID() throws(LMDBError) -> Int {
        try meta().info.me_last_txnid
    }

    /// The environment's map and reader figures. The corresponding C function is `mdb_env_info`.
    /// Not to be called inside a read transaction of this environment: it waits for the map
    /// like a reader.
    package func info() throws(LMDBError) -> EnvironmentInfo {
        let (raw, st) = try meta()
        let readers = try withOpenHandle("mdb_reader_list") { readerTable() }
        return EnvironmentInfo(
            mapSize: raw.me_mapsize, pageSize: Int(st.ms_psize), lastPageNumber: raw.me_last_pgno,
            lastTransactionID: raw.me_last_txnid, maxReaders: Int(raw.me_maxreaders),
            readerSlotsUsed: readers.slots, activeReaders: readers.active)
    }

    /// `mdb_env_info` and `mdb_env_stat`. Both read the meta pages in the map, so they enter the
    /// reader gate: a thread adopting a map grown by another process must not remap under them.
    private func meta() throws(LMDBError) -> (info: MDB_envinfo, stat: MDB_stat) {
        try enterGateOpen("mdb_env_info")
        defer { gate.leaveShared() }
        var raw = MDB_envinfo()
        try check(mdb_env_info(handle, &raw), "mdb_env_info", path: path)
        var st = MDB_stat()
        try check(mdb_env_stat(handle, &st), "mdb_env_stat", path: path)
        return (raw, st)
    }

    /// Counts reader slots from `mdb_reader_list`: recycled (reset) transactions show `-` as txnid.
    private func readerTable() -> (slots: Int, active: Int) {
        final class Tally { var slots = 0; var active = 0 }
        let tally = Tally()
        let context = Unmanaged.passRetained(tally)
        defer { context.release() }
        _ = mdb_reader_list(handle, { message, ctx in
            guard let message, let ctx else { return 0 }
            let tally = Unmanaged<Tally>.fromOpaque(ctx).takeUnretainedValue()
            let line = String(cString: message)
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\n" })
            // Header is "pid thread txnid"; an empty table prints "(no active readers)".
            // (Three words too: it was counted as an active reader.)
            guard fields.count == 3, fields[0].allSatisfy(\.isNumber) else { return 0 }
            tally.slots += 1
            if fields[2] != "-" { tally.active += 1 }
            return 0
        }, context.toOpaque())
        return (tally.slots, tally.active)
    }

    /// Flushes buffered data to disk (needed after relaxed commits). The corresponding C
    /// function is `mdb_env_sync`.
    package func sync(force: Bool = true) throws(LMDBError) {
        try withOpenHandle("mdb_env_sync") { () throws(LMDBError) in
            try check(mdb_env_sync(handle, force ? 1 : 0), "mdb_env_sync", path: path)
        }
    }

    /// True while commits skip their flush (`MDB_NOSYNC`, from the options or
    /// ``setRelaxedDurability(_:)``). The corresponding C function is `mdb_env_get_flags`.
    package var isRelaxedDurability: Bool {
        get throws(LMDBError) {
            try withOpenHandle("mdb_env_get_flags") { () throws(LMDBError) in
                var flags: UInt32 = 0
                try check(mdb_env_get_flags(handle, &flags), "mdb_env_get_flags", path: path)
                return flags & UInt32(MDB_NOSYNC) != 0
            }
        }
    }

    /// Switches between durable and relaxed commits while open (for bulk loads that sync at the
    /// end). The corresponding C function is `mdb_env_set_flags` with `MDB_NOSYNC`.
    package func setRelaxedDurability(_ relaxed: Bool) throws(LMDBError) {
        try withOpenHandle("mdb_env_set_flags") { () throws(LMDBError) in
            try check(mdb_env_set_flags(handle, UInt32(MDB_NOSYNC), relaxed ? 1 : 0), "mdb_env_set_flags", path: path)
        }
    }
}
