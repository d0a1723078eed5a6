internal import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tracks whether a transaction is live, and the cursors to close before it ends.
///
/// Anything that outlives its closure (a sequence, a cursor) checks the token on use and
/// traps instead of reading freed memory.
final class TransactionToken {
    var isLive = true
    /// True for read transactions: their data cannot change while a cursor walks it, so a walk
    /// that sees more (or, over a whole database, fewer) entries than the database holds has
    /// met a damaged page.
    let isReadOnly: Bool
    var sawMapFull = false
    /// The first error LMDB returned in this transaction for a damaged page. Sequences, which
    /// cannot throw, end early and leave it here; the transaction's closure then throws it.
    var failure: LMDBError?
    var openCursors: [ObjectIdentifier: OpaquePointer] = [:]

    init(readOnly: Bool) { isReadOnly = readOnly }

    /// Closes cursors that are still open. lmdb.h: "A cursor in a read-only transaction must be
    /// closed explicitly, before or after its transaction ends."
    func end() {
        for (_, cursor) in openCursors { mdb_cursor_close(cursor) }
        openCursors.removeAll()
        isLive = false
    }
}

/// The internals shared by read and write transactions. Not usable outside the package.
package struct TransactionHandle {
    let txn: OpaquePointer
    let token: TransactionToken
    let environment: Environment

    @inline(__always)
    func checkLive() {
        precondition(token.isLive, "LMDB transaction used after it ended (it escaped its closure)")
    }

    /// `mdb_put`, for both put methods: false when `.noOverwrite` (or `.noDuplicateData`) found
    /// the key (or pair) already there.
    @inline(__always) @discardableResult
    func put(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in database: Database, flags: WriteFlags)
        throws(LMDBError) -> Bool
    {
        var k = MDB_val(key)
        var v = MDB_val(value)
        let rc = mdb_put(txn, database.dbi, &k, &v, flags.rawValue)
        if rc == MDB_KEYEXIST && !flags.isDisjoint(with: [.noOverwrite, .noDuplicateData]) { return false }
        try check(rc, "mdb_put")
        return true
    }

    /// The number of entries `mdb_stat` reports for the database in this transaction.
    func entryCount(of database: Database) throws(LMDBError) -> Int {
        var st = MDB_stat()
        try check(mdb_stat(txn, database.dbi, &st), "mdb_stat")
        return st.ms_entries
    }

    @inline(__always)
    func check(_ rc: Int32, _ operation: StaticString) throws(LMDBError) {
        guard rc != MDB_SUCCESS else { return }
        if rc == MDB_MAP_FULL { token.sawMapFull = true }
        do {
            try QuireLMDB.check(rc, operation, path: environment.path)
        } catch {
            if error.isCorruption && token.failure == nil { token.failure = error }
            throw error
        }
    }
}

@available(*, unavailable)
extension TransactionHandle: Sendable {}

/// What read and write transactions can both do: point reads, cursors, statistics.
package protocol ReadableTransaction: ~Copyable {
    /// The internal handle.
    var raw: TransactionHandle { get }
}

/// What write transactions can do beyond reading: put, reserve, delete.
///
/// Types that wrap a write transaction inside its closure (such as a store's transaction)
/// conform by exposing its `raw` handle.
package protocol WritableTransaction: ReadableTransaction, ~Copyable {}

/// A read-only snapshot, valid inside `Environment.read`.
///
/// It sees the data as of its start, whatever writers commit meanwhile (MVCC).
package struct ReadTransaction: ReadableTransaction, ~Copyable {
    package let raw: TransactionHandle
}

/// A write transaction, valid inside `Environment.write`; committed when the closure returns.
package struct WriteTransaction: WritableTransaction, ~Copyable {
    package let raw: TransactionHandle
}

@available(*, unavailable)
extension ReadTransaction: Sendable {}

@available(*, unavailable)
extension WriteTransaction: Sendable {}

extension MDB_val {
    @inline(__always)
    init(_ buffer: UnsafeRawBufferPointer) {
        self.init(mv_size: buffer.count, mv_data: UnsafeMutableRawPointer(mutating: buffer.baseAddress))
    }

    @inline(__always)
    var buffer: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: mv_data, count: mv_size)
    }
}

extension ReadableTransaction where Self: ~Copyable {
    /// Calls `body` with a zero-copy view of the value for `key`, or returns nil when absent.
    ///
    /// The view points into the map and is valid only inside `body`. The corresponding C
    /// function is `mdb_get`.
    package func withValue<R>(
        forKey key: UnsafeRawBufferPointer, in database: Database, _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        raw.checkLive()
        guard !key.isEmpty else { return nil }  // no key is empty: absent, not LMDB's MDB_BAD_VALSIZE
        var k = MDB_val(key)
        var v = MDB_val()
        let rc = mdb_get(raw.txn, database.dbi, &k, &v)
        if rc == MDB_NOTFOUND { return nil }
        try raw.check(rc, "mdb_get")
        return try body(v.buffer)
    }

    /// Calls `body` with a zero-copy view of the value for `key`, or returns nil when absent.
    package func withValue<R>(
        forKey key: [UInt8], in database: Database, _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        try key.withUnsafeBytes { try withValue(forKey: $0, in: database, body) }
    }

    /// A copy of the value for `key`, or nil when absent.
    package func get(_ key: [UInt8], in database: Database) throws(LMDBError) -> [UInt8]? {
        raw.checkLive()
        guard !key.isEmpty else { return nil }
        return try withBytes(key) { (keyBytes) throws(LMDBError) -> [UInt8]? in
            var k = MDB_val(keyBytes)
            var v = MDB_val()
            let rc = mdb_get(raw.txn, database.dbi, &k, &v)
            if rc == MDB_NOTFOUND { return nil }
            try raw.check(rc, "mdb_get")
            return Array(v.buffer)
        }
    }

    /// True when `key` is present.
    package func contains(_ key: [UInt8], in database: Database) throws(LMDBError) -> Bool {
        raw.checkLive()
        guard !key.isEmpty else { return false }
        return try withBytes(key) { (keyBytes) throws(LMDBError) -> Bool in
            var k = MDB_val(keyBytes)
            var v = MDB_val()
            let rc = mdb_get(raw.txn, database.dbi, &k, &v)
            if rc == MDB_NOTFOUND { return false }
            try raw.check(rc, "mdb_get")
            return true
        }
    }

    /// True when the pair (`key`, `value`) is stored in a `duplicateSort` database: one
    /// descent of the tree, however many duplicates `key` has. The corresponding C call is
    /// `mdb_cursor_get` with `MDB_GET_BOTH`.
    package func contains(_ key: [UInt8], value: [UInt8], in database: Database) throws(LMDBError) -> Bool {
        raw.checkLive()
        guard !key.isEmpty else { return false }
        var cursor: OpaquePointer?
        try raw.check(mdb_cursor_open(raw.txn, database.dbi, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        return try withBytes(key) { (keyBytes) throws(LMDBError) -> Bool in
            try withBytes(value) { (valueBytes) throws(LMDBError) -> Bool in
                var k = MDB_val(keyBytes)
                var v = MDB_val(valueBytes)
                let rc = mdb_cursor_get(cursor, &k, &v, MDB_GET_BOTH)
                if rc == MDB_NOTFOUND { return false }
                try raw.check(rc, "mdb_cursor_get(MDB_GET_BOTH)")
                return true
            }
        }
    }

    /// The transaction's ID: a snapshot's is the last commit's it sees, a write transaction's
    /// one more than the last commit's. The corresponding C function is `mdb_txn_id`.
    package var id: Int {
        raw.checkLive()
        return Int(mdb_txn_id(raw.txn))
    }

    /// The database's statistics in this snapshot. The corresponding C function is `mdb_stat`.
    package func statistics(of database: Database) throws(LMDBError) -> DatabaseStatistics {
        raw.checkLive()
        var st = MDB_stat()
        try raw.check(mdb_stat(raw.txn, database.dbi, &st), "mdb_stat")
        try checkPlausible(st.ms_branch_pages, st.ms_leaf_pages, st.ms_overflow_pages)
        return DatabaseStatistics(
            pageSize: Int(st.ms_psize), depth: Int(st.ms_depth), branchPages: st.ms_branch_pages,
            leafPages: st.ms_leaf_pages, overflowPages: st.ms_overflow_pages, entries: st.ms_entries)
    }

    /// Pages of the B-trees LMDB's statistics count in this snapshot: the free list's, the main
    /// database's and every named database's (`mdb_stat` of each, read from its record in the
    /// main database without opening it: `mdb_dbi_open` may not run beside other transactions).
    /// The sub-trees holding one key's many duplicates (`MDB_DUPSORT`) are in no count: the
    /// file's used pages minus these, the free pages and the two meta pages are theirs.
    package func countedPages() throws(LMDBError) -> Int {
        raw.checkLive()
        var total = 0
        for dbi: MDB_dbi in [0, 1] {  // FREE_DBI and MAIN_DBI
            var st = MDB_stat()
            try raw.check(mdb_stat(raw.txn, dbi, &st), "mdb_stat")
            try checkPlausible(st.ms_branch_pages, st.ms_leaf_pages, st.ms_overflow_pages)
            total += st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages
        }
        var cursor: OpaquePointer?
        try raw.check(mdb_cursor_open(raw.txn, 1, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        var rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
        while rc == MDB_SUCCESS {
            // A named database's record (LMDB's `MDB_db`): pad and flags (4 + 2 bytes), depth (2),
            // then branch, leaf and overflow page counts, entries and root, a word each.
            let word = MemoryLayout<Int>.size
            if value.mv_size == 8 + 5 * word, let base = value.mv_data {
                for field in 0..<3 {
                    // Damage can put anything here: a count no file can hold is the corruption
                    // error, as for the free list's and the main database's.
                    let pages = base.loadUnaligned(fromByteOffset: 8 + field * word, as: Int.self)
                    try checkPlausible(pages)
                    total += pages
                }
            }
            rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try raw.check(rc, "mdb_cursor_get") }
        return total
    }

    /// Throws the corruption error for page counts no file can hold (a damaged meta page or
    /// database record): sums and byte sizes of them would overflow.
    @inline(__always)
    private func checkPlausible(_ first: Int, _ second: Int = 0, _ third: Int = 0) throws(LMDBError) {
        let limit = Int(Int32.max)
        guard (0..<limit).contains(first), (0..<limit).contains(second), (0..<limit).contains(third) else {
            throw LMDBError(
                code: MDB_CORRUPTED, operation: "mdb_stat", path: raw.environment.path,
                hint: "a database's page counts are beyond any file: the file is damaged; verify it and restore a backup")
        }
    }

    /// Pages of the file that no database uses in this snapshot: freed by earlier
    /// transactions, reused by later writes (LMDB never shrinks the file; a compacting copy
    /// leaves them out). What `mdb_stat -f` reports as free pages.
    package func freePageCount() throws(LMDBError) -> Int {
        raw.checkLive()
        var cursor: OpaquePointer?
        // Database 0 is LMDB's free list (FREE_DBI): each value is a page-number list whose
        // first word is its length.
        try raw.check(mdb_cursor_open(raw.txn, 0, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        var total = 0
        var rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
        while rc == MDB_SUCCESS {
            if value.mv_size >= MemoryLayout<Int>.size, let base = value.mv_data {
                // A damaged list's length word can be anything: counted as none, never a trap.
                let length = base.loadUnaligned(as: Int.self)
                if length > 0, length <= value.mv_size / MemoryLayout<Int>.size { total += length }
            }
            rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try raw.check(rc, "mdb_cursor_get") }
        return total
    }

    /// The number of entries in the database.
    package func count(of database: Database) throws(LMDBError) -> Int {
        try statistics(of: database).entries
    }

    /// The entries whose keys fall in `range`, in key order (or reverse), as zero-copy views.
    ///
    /// The sequence and its entries are valid only inside the transaction's closure.
    package func entries(in database: Database, range: KeyRange = .all, reverse: Bool = false) -> EntrySequence {
        raw.checkLive()
        return EntrySequence(handle: raw, database: database, mode: .range(range, reverse: reverse))
    }

    /// The values stored under `key` in a `duplicateSort` database, in order.
    package func duplicates(of key: [UInt8], in database: Database) -> EntrySequence {
        raw.checkLive()
        return EntrySequence(handle: raw, database: database, mode: .duplicates(key))
    }

    /// Throws the error a sequence met (``EntrySequence`` ends early on a damaged page, since
    /// iteration cannot throw). `Environment.read` and `write` call this when their closure
    /// returns; call it sooner to say where the damage is.
    package func checkIntact() throws(LMDBError) {
        if let failure = raw.token.failure { throw failure }
    }

    /// A cursor for step-by-step positioning. Valid only inside the transaction's closure.
    package func cursor(in database: Database) throws(LMDBError) -> Cursor {
        raw.checkLive()
        return try Cursor(handle: raw, database: database)
    }
}

extension WritableTransaction where Self: ~Copyable {
    /// Stores `value` under `key`.
    ///
    /// - Returns: false when `.noOverwrite` (or `.noDuplicateData`) found the key (or pair)
    ///   already there; true when stored.
    /// - Throws: `LMDBError.badValueSize` for an empty or too-long key; `LMDBError.keyExists`
    ///   for an `.append` out of order; `LMDBError.mapFull` (handled by `Environment.write`).
    /// The corresponding C function is `mdb_put`.
    @discardableResult
    package func put(
        _ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in database: Database,
        flags: WriteFlags = []
    ) throws(LMDBError) -> Bool {
        raw.checkLive()
        return try raw.put(value, forKey: key, in: database, flags: flags)
    }

    /// Stores `count` values, the `i`th being `pair(i)`, in that order: the same as `count` calls
    /// of ``put(_:forKey:in:flags:)-(UnsafeRawBufferPointer,_,_,_)`` (a pair that `.noOverwrite`
    /// or `.noDuplicateData` finds already stored is skipped), minus reaching the transaction
    /// handle for each one, which counts references (a bulk load puts hundreds of thousands).
    package func putEach(
        count: Int, in database: Database, flags: WriteFlags = [],
        _ pair: (Int) -> (value: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer)
    ) throws(LMDBError) {
        let raw = self.raw
        raw.checkLive()
        for i in 0..<count {
            let (value, key) = pair(i)
            try raw.put(value, forKey: key, in: database, flags: flags)
        }
    }

    /// Stores `value` under `key`. See `put(_:forKey:in:flags:)` for the raw-buffer variant.
    @discardableResult
    package func put(_ value: [UInt8], forKey key: [UInt8], in database: Database, flags: WriteFlags = [])
        throws(LMDBError) -> Bool
    {
        try withBytes(value) { (v) throws(LMDBError) -> Bool in
            try withBytes(key) { (k) throws(LMDBError) -> Bool in
                try put(v, forKey: k, in: database, flags: flags)
            }
        }
    }

    /// Reserves `count` bytes for `key` and lets `fill` write the value in place (no copy).
    ///
    /// Not for `duplicateSort` databases. The corresponding C flag is `MDB_RESERVE`.
    @discardableResult
    package func reserve(
        _ count: Int, forKey key: [UInt8], in database: Database, flags: WriteFlags = [],
        fill: (UnsafeMutableRawBufferPointer) -> Void
    ) throws(LMDBError) -> Bool {
        raw.checkLive()
        precondition(!database.flags.contains(.duplicateSort), "MDB_RESERVE is not allowed with MDB_DUPSORT")
        return try withBytes(key) { (keyBytes) throws(LMDBError) -> Bool in
            var k = MDB_val(keyBytes)
            var v = MDB_val(mv_size: count, mv_data: nil)
            let rc = mdb_put(raw.txn, database.dbi, &k, &v, flags.rawValue | UInt32(MDB_RESERVE))
            if rc == MDB_KEYEXIST && flags.contains(.noOverwrite) { return false }
            try raw.check(rc, "mdb_put")
            fill(UnsafeMutableRawBufferPointer(start: v.mv_data, count: count))
            return true
        }
    }

    /// Deletes `key` (all its values in a `duplicateSort` database).
    /// - Returns: false when the key was absent. The corresponding C function is `mdb_del`.
    @discardableResult
    package func delete(_ key: [UInt8], in database: Database) throws(LMDBError) -> Bool {
        raw.checkLive()
        return try withBytes(key) { (keyBytes) throws(LMDBError) -> Bool in
            var k = MDB_val(keyBytes)
            let rc = mdb_del(raw.txn, database.dbi, &k, nil)
            if rc == MDB_NOTFOUND { return false }
            try raw.check(rc, "mdb_del")
            return true
        }
    }

    /// Deletes one key/value pair of a `duplicateSort` database.
    /// - Returns: false when the pair was absent.
    @discardableResult
    package func delete(_ key: [UInt8], value: [UInt8], in database: Database) throws(LMDBError) -> Bool {
        raw.checkLive()
        return try withBytes(key) { (keyBytes) throws(LMDBError) -> Bool in
            try withBytes(value) { (valueBytes) throws(LMDBError) -> Bool in
                var k = MDB_val(keyBytes)
                var v = MDB_val(valueBytes)
                let rc = mdb_del(raw.txn, database.dbi, &k, &v)
                if rc == MDB_NOTFOUND { return false }
                try raw.check(rc, "mdb_del")
                return true
            }
        }
    }

    /// Deletes the database itself (its entries and its name) when the transaction commits; the
    /// handle must not be used afterwards. The corresponding C function is `mdb_drop` with 1.
    package func dropDatabase(_ database: Database) throws(LMDBError) {
        raw.checkLive()
        try raw.check(mdb_drop(raw.txn, database.dbi, 1), "mdb_drop")
        // LMDB closed the handle; its slot goes to the next database opened.
        raw.environment.forget(database)
    }

    /// Deletes the database named `name`, if there is one, through a handle opened in this
    /// transaction: a body run again (after the map grew) opens it again, where a handle
    /// dropped by the first run would be closed. The corresponding C functions are
    /// `mdb_dbi_open` and `mdb_drop`.
    package func dropDatabase(named name: String) throws(LMDBError) {
        raw.checkLive()
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(raw.txn, name, 0, &dbi)
        if rc == MDB_NOTFOUND { return }
        try raw.check(rc, "mdb_dbi_open")
        try raw.check(mdb_drop(raw.txn, dbi, 1), "mdb_drop")
        raw.environment.forget(Database(dbi: dbi, name: name, flags: []))
    }

    /// Removes every entry of the database, keeping it. The corresponding C function is `mdb_drop`.
    package func removeAll(in database: Database) throws(LMDBError) {
        raw.checkLive()
        try raw.check(mdb_drop(raw.txn, database.dbi, 0), "mdb_drop")
    }
}

/// `Array.withUnsafeBytes` rethrows untyped errors; this keeps the closure's error type.
@inline(__always)
func withBytes<R, E: Error>(_ array: [UInt8], _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
    let result: Result<R, E> = array.withUnsafeBytes { buffer in
        do throws(E) {
            return .success(try body(buffer))
        } catch {
            return .failure(error)
        }
    }
    return try result.get()
}
