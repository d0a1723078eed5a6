import Foundation
import QuireCodec
package import QuireLMDB
import Synchronization

/// An embedded store of typed collections in one LMDB environment.
///
/// Reads run on any thread or task, synchronously, from MVCC snapshots of the memory map
/// (`read { snapshot in … }`); writes go through one actor (`write { txn in … }`, `put`,
/// `bulkInsert`) that runs on a dedicated thread. The directory is a standard LMDB
/// environment that `mdb_stat`, `mdb_dump` and `mdb_copy` understand.
///
/// ```swift
/// let store = try Store(path: "articles.db")
/// try store.register(articles)
/// try await store.put(article, in: articles)
/// let again = try store.read { try $0.get(.string(article.id), from: articles) }
/// ```
public final class Store: Sendable {
    /// The LMDB environment under the store: for Quire's own layers only (an embedder reaches
    /// the data through snapshots and the writer, never around them).
    package let environment: Environment

    /// The store's directory.
    public var path: String { environment.path }
    /// How the store was opened.
    public let options: StoreOptions
    /// The single writer. Not public: an embedder's actor put on its thread would hold up
    /// every commit.
    package let writer: StoreWriter

    let metaDB: Database
    let fieldsDB: Database
    /// Physical → logical keys of keys over 510 bytes (see `LongKeys`); nil in a read-only store
    /// that has never held one.
    let longKeysStore: Mutex<Database?>
    /// How long keys become physical ones.
    let longKeys: LongKeys
    // Read on every decode from every reader thread: `Mutex` (a futex) is much cheaper under
    // contention than a pthread mutex here; these are the read-mostly hot paths.
    let fieldCache: Mutex<FieldTable>
    let registry = Mutex<[String: RegisteredCollection]>([:])
    let relations = Mutex<[String: Database]>([:])
    /// Large arrays of finished searches, for the next ones.
    let searchQueryBuffers = SearchQueryBuffers()
    let commitQueue = CommitQueue()
    let counters = Locked<StoreCounters>(StoreCounters())
    /// Bulk loads running with relaxed durability (group commits then sync explicitly).
    let relaxedBulkLoads = Locked<Int>(0)
    /// Commits synced on their own because a relaxed bulk load had turned syncs off (tests).
    package let commitsSyncedBesideRelaxedLoads = Atomic<Int>(0)
    /// Compressed collections whose automatic dictionary training failed in this process.
    let dictionaryTrainingFailed = Mutex<Set<String>>([])
    /// The entries `_meta` had when this process last looked for dictionaries stored by
    /// another (``adoptStoredDictionaries(_:)``); -1 before the first look.
    let metaEntriesSeen = Atomic<Int>(-1)
    /// The durable change feed's database; nil in a read-only store that has none yet.
    let changesStore = Mutex<Database?>(nil)
    /// Bumped after every commit, to wake change feed iterators of this process.
    let commitEpoch = Atomic<UInt64>(0)
    /// Write transactions running (0 or 1: only the writer thread writes).
    let writeDepth = Locked<Int>(0)

    /// Whether the caller is the writer thread inside a write transaction: a register or a write
    /// from there would wait for itself.
    var isInsideWrite: Bool { writer.isCurrent && writeDepth.withLock { $0 > 0 } }

    /// Opens (creating unless read-only) the store at `path`.
    ///
    /// - Throws: `StoreError` with `.newerFormat` for a store written by a newer Quire,
    ///   `.corrupted` for damaged metadata or field table, `.alreadyOpen` when this process has
    ///   the store open already (under any path), `.storage` (wrapping the LMDB error) for I/O
    ///   problems.
    public convenience init(path: String, options: StoreOptions = StoreOptions()) throws(StoreError) {
        do {
            try self.init(opening: path, options: options)
        } catch {
            throw StoreError.wrap(error, "\(path): cannot open the store")
        }
    }

    private init(opening path: String, options: StoreOptions) throws {
        self.options = options
        if !options.readOnly {
            // A new store appears whole: its metadata databases and format stamp are written
            // before its data file is linked into place, so no process ever opens half a store.
            try Environment.create(at: path, options: options.environmentOptions) { env in
                let meta = try env.openDatabase(StoreLayout.meta)
                _ = try env.openDatabase(StoreLayout.fields)
                _ = try env.openDatabase(StoreLayout.longKeys)
                try env.write { txn in
                    try txn.put(Array(String(StoreLayout.formatVersion).utf8), forKey: StoreLayout.formatKey, in: meta)
                }
            }
        }
        let env = try Environment(path: path, options: options.environmentOptions)
        do {
            let meta: Database
            let fieldNames: Database
            var longKeyNames: Database?
            if options.readOnly {
                do {
                    meta = try env.openDatabase(StoreLayout.meta, flags: [])
                } catch let error where error.isCorruption {
                    throw StoreError.corruption(error, path: env.path, context: "while opening its metadata")
                } catch {
                    throw StoreError(.corrupted, "\(env.path): not a Quire store (no metadata)")
                }
                fieldNames = try env.openDatabase(StoreLayout.fields, flags: [])
                longKeyNames = try? env.openDatabase(StoreLayout.longKeys, flags: [])
            } else {
                meta = try Store.writableMeta(env)
                fieldNames = try env.openDatabase(StoreLayout.fields)
                longKeyNames = try env.openDatabase(StoreLayout.longKeys)
            }
            try Store.checkFormat(env, meta, readOnly: options.readOnly)
            let table = try env.read { txn in try Store.loadFieldTable(txn, fieldNames, meta: meta, path: env.path) }
            metaDB = meta
            fieldsDB = fieldNames
            fieldCache = Mutex(table)
            longKeysStore = Mutex(longKeyNames)
            longKeys = LongKeys(digest: options.longKeyDigest)
        } catch {
            env.close()
            throw error
        }
        environment = env
        do {
            writer = try StoreWriter()
        } catch {
            env.close()
            throw StoreError(.storage, "\(env.path): cannot open the store", underlying: error)
        }
        do {
            try openStoredDatabases()
        } catch {
            env.close()
            throw error
        }
    }

    deinit {
        writer.stop()
    }

    /// Closes the store; later reads and writes throw. Waits for running reads, and for the
    /// running write: calling it inside a write transaction or inside a read of this store on
    /// the same thread is a programming error and traps (it would wait for itself), as
    /// `register` does inside a write.
    public func close() {
        precondition(!isInsideWrite, "Quire: store.close() inside a write transaction would wait for itself; close after the write returns")
        precondition(!environment.isInsideRead, "Quire: store.close() inside a read of the same store would wait for itself; close after the read returns")
        environment.close()
    }

    /// The metadata database of a store opened for writing. Every store is created with it: an
    /// environment of other databases without it is another program's (writing into it made it
    /// half a store), refused; an empty one is taken.
    private static func writableMeta(_ env: Environment) throws -> Database {
        if let meta = try? env.openDatabase(StoreLayout.meta, flags: []) { return meta }
        let main = try env.openDatabase(nil, flags: [])
        guard try env.read({ txn in try txn.count(of: main) }) == 0 else {
            throw StoreError(
                .corrupted,
                "\(env.path): not a Quire store (an LMDB environment of other databases, without Quire's metadata); nothing was written: use a new or empty directory")
        }
        return try env.openDatabase(StoreLayout.meta)
    }

    /// Refuses stores of a newer format; stamps new stores with this one.
    private static func checkFormat(_ env: Environment, _ meta: Database, readOnly: Bool) throws {
        let stored = try env.read { txn in try txn.get(StoreLayout.formatKey, in: meta) }
        guard let stored else {
            if readOnly { throw StoreError(.corrupted, "\(env.path): not a Quire store (no format version)") }
            try env.write { txn in
                try txn.put(Array(String(StoreLayout.formatVersion).utf8), forKey: StoreLayout.formatKey, in: meta)
            }
            return
        }
        guard let text = String(validating: stored, as: UTF8.self), let version = Int(text), version > 0 else {
            throw StoreError(.corrupted, "\(env.path): unreadable format version")
        }
        if version > StoreLayout.formatVersion {
            throw StoreError(
                .newerFormat,
                "\(env.path): store format \(version) is newer than this Quire reads (\(StoreLayout.formatVersion)); upgrade Quire"
            )
        }
        if version < StoreLayout.formatVersion && !readOnly {
            try env.write { txn in
                try txn.put(Array(String(StoreLayout.formatVersion).utf8), forKey: StoreLayout.formatKey, in: meta)
            }
        }
    }

    /// Reads the whole field table from a snapshot, checking that ids are dense and names unique.
    ///
    /// With `meta`, the table must match the checksum stored there (stores that never appended a
    /// name since checksums came have none).
    static func loadFieldTable<T: ReadableTransaction & ~Copyable>(
        _ txn: borrowing T, _ fields: Database, meta: Database, path: String
    ) throws -> FieldTable {
        var names: [String] = []
        // By bytes: canonically equivalent names (`café` composed and decomposed) are two entries.
        var seen = Set<[UInt8]>()
        for entry in txn.entries(in: fields) {
            guard entry.key.count == 4 else {
                throw StoreError(.corrupted, "\(path): field table: malformed id")
            }
            let id = entry.key.reduce(0) { $0 << 8 | Int($1) }
            guard id == names.count else {
                throw StoreError(.corrupted, "\(path): field table: id \(id) where \(names.count) was expected")
            }
            guard let name = String(validating: entry.value, as: UTF8.self), seen.insert(Array(entry.value)).inserted else {
                throw StoreError(.corrupted, "\(path): field table: invalid or repeated name for id \(id)")
            }
            names.append(name)
        }
        if let stored = try txn.get(StoreLayout.fieldsChecksumKey, in: meta), stored != StoreLayout.fieldsChecksum(names) {
            throw StoreError(.corrupted, "\(path): field table: names do not match their checksum; \(StoreError.corruptionMessage)")
        }
        return FieldTable(names: names)
    }

    /// The field table as this process knows it.
    var fields: FieldTable { fieldCache.withLock { $0 } }

    /// Adopts a newer table (read from a snapshot or committed by the writer).
    func adoptFields(_ table: FieldTable) {
        fieldCache.withLock { current in
            if table.count > current.count { current = table }
        }
    }

    /// Runs `body` in a read-only snapshot, synchronously, on the calling thread.
    ///
    /// Many reads run at once, and alongside the writer; each sees the store as of its start.
    /// Values handed out as raw bytes are valid only inside `body`.
    ///
    /// - Throws: whatever `body` throws; `StoreError(.corrupted)` "the store is corrupted; run
    ///   quire verify" when LMDB met a damaged page (wrapping the LMDB layer's error).
    @discardableResult
    public func read<R>(_ body: (borrowing Snapshot) throws -> R) throws -> R {
        do {
            return try environment.read { txn in
                try adoptStoredDictionaries(txn)
                return try body(Snapshot(raw: txn.raw, store: self))
            }
        } catch let error as LMDBError where error.isCorruption {
            throw StoreError.corruption(error, path: environment.path)
        } catch let error as LMDBError {
            throw StoreError.wrap(error, "\(environment.path): reading")
        }
    }


    /// Figures about the store's own work in this process.
    public var statistics: StoreCounters { counters.withLock { $0 } }
}

/// Counters of the writer's work in this process.
public struct StoreCounters: Sendable, Hashable {
    /// Write transactions committed.
    public var commits = 0
    /// Single-record writes that went through group commit.
    public var groupedWrites = 0
    /// Records written by bulk inserts.
    public var bulkRecords = 0
}
