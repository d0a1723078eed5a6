internal import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A key and value seen through a cursor: zero-copy views of the map.
///
/// Valid only inside the transaction's closure; copy with `Array(entry.key)` to keep them.
package struct Entry {
    /// The key bytes.
    package let key: UnsafeRawBufferPointer
    /// The value bytes.
    package let value: UnsafeRawBufferPointer

    /// A copy of the key.
    package var keyBytes: [UInt8] { Array(key) }
    /// A copy of the value.
    package var valueBytes: [UInt8] { Array(value) }
}

@available(*, unavailable)
extension Entry: Sendable {}

/// A position in a database, moved step by step. The corresponding C type is `MDB_cursor`.
///
/// Valid only inside its transaction's closure: use after the transaction ends traps.
package final class Cursor {
    private let handle: TransactionHandle
    private let cursor: OpaquePointer
    private let database: Database
    /// In a read transaction, the walk since the cursor was last positioned: entries seen, in
    /// which direction, and whether it started at an end of the database. The data cannot
    /// change under a read cursor, so a walk that sees more entries than the database holds (or,
    /// end to end, fewer) has met damaged pages; without this, a cycle of pages loops forever.
    private var walk = Walk()
    /// The database's entry count, read when the first read-only move needs it.
    private var entryCount: Int?
    /// The database's key order (``keyOrder()``), read when the first step needs it.
    private var order: (bytewise: Bool, duplicates: Bool)?

    private struct Walk {
        var seen = 0
        var forward = true
        var wholeDatabase = false
        /// The key of the entry before, in the map (a read transaction's pages stay put): a walk
        /// whose keys go back has met a damaged page (one copied over another gave a dump
        /// records twice and out of order, and left others out, with status 0).
        var previousKey: UnsafeRawBufferPointer?
    }

    init(handle: TransactionHandle, database: Database) throws(LMDBError) {
        handle.checkLive()
        self.handle = handle
        self.database = database
        var c: OpaquePointer?
        try handle.check(mdb_cursor_open(handle.txn, database.dbi, &c), "mdb_cursor_open")
        guard let c else { preconditionFailure("mdb_cursor_open returned no cursor") }
        cursor = c
        handle.token.openCursors[ObjectIdentifier(self)] = c
    }

    deinit {
        // A live transaction still owns the cursor; after the end, the token already closed it.
        if handle.token.isLive, let c = handle.token.openCursors.removeValue(forKey: ObjectIdentifier(self)) {
            mdb_cursor_close(c)
        }
    }

    private func move(_ op: MDB_cursor_op, key: [UInt8]? = nil) throws(LMDBError) -> Entry? {
        // No key is empty (LMDB answers MDB_BAD_VALSIZE): every key is at least the empty one,
        // and none is it.
        if key?.isEmpty == true { return op == MDB_SET_RANGE ? try move(MDB_FIRST) : nil }
        handle.checkLive()
        var k = MDB_val()
        var v = MDB_val()
        let rc: Int32
        if let key {
            rc = key.withUnsafeBytes { bytes in
                k = MDB_val(bytes)
                return mdb_cursor_get(cursor, &k, &v, op)
            }
        } else {
            rc = mdb_cursor_get(cursor, &k, &v, op)
        }
        if handle.token.isReadOnly && op != MDB_GET_CURRENT {
            try follow(op, found: rc == MDB_SUCCESS, notFound: rc == MDB_NOTFOUND, key: k.buffer, sought: key)
        }
        if rc == MDB_NOTFOUND { return nil }
        try handle.check(rc, "mdb_cursor_get")
        return Entry(key: k.buffer, value: v.buffer)
    }

    /// Counts a read cursor's walk (see `walk`) and throws `MDB_CORRUPTED` when it cannot be right.
    private func follow(
        _ op: MDB_cursor_op, found: Bool, notFound: Bool, key: UnsafeRawBufferPointer, sought: [UInt8]? = nil
    ) throws(LMDBError) {
        switch op {
        case MDB_FIRST, MDB_LAST:
            walk = Walk(seen: 0, forward: op == MDB_FIRST, wholeDatabase: true)
        case MDB_SET_RANGE, MDB_SET_KEY, MDB_GET_BOTH, MDB_LAST_DUP:
            // A reverse walk from a key's last duplicate starts there: counted from its seek, it
            // counted one entry twice and took a walk back over the whole database for damage.
            walk = Walk(seen: 0, forward: true, wholeDatabase: false)
        case MDB_NEXT, MDB_PREV:
            if walk.forward != (op == MDB_NEXT) { walk.wholeDatabase = false }
        default:
            walk.wholeDatabase = false
        }
        if entryCount == nil { entryCount = try handle.entryCount(of: database) }
        let limit = entryCount ?? .max
        if found {
            walk.seen += 1
            if walk.seen > limit { throw damaged("a walk found more than the \(limit) entries the database holds") }
            // A damaged separator in a branch page sends a seek to the wrong leaf: a range read
            // from there would take other keys for its own (a search answered thousands of hits
            // for a term of two).
            if op == MDB_SET_RANGE, let sought, try keyOrder().bytewise, compareKeys(key, sought) < 0 {
                throw damaged("a seek landed before the key it sought")
            }
            if op == MDB_NEXT || op == MDB_PREV, let previous = walk.previousKey {
                let keys = try keyOrder()
                // Keys ascend (a key's duplicates repeat it); backwards they descend.
                let order = KeyRange.compare(key, previous) * (op == MDB_NEXT ? 1 : -1)
                if keys.bytewise, order < 0 || (order == 0 && !keys.duplicates) {
                    throw damaged("a walk met a key out of order after \(walk.seen - 1) entries")
                }
            }
            // Only these ops point the key into the map; others may leave the caller's bytes.
            switch op {
            case MDB_FIRST, MDB_LAST, MDB_NEXT, MDB_PREV, MDB_SET_RANGE, MDB_SET_KEY: walk.previousKey = key
            default: walk.previousKey = nil
            }
        } else if notFound && walk.wholeDatabase && walk.seen != limit {
            throw damaged("a walk of the database found \(walk.seen) entries where it holds \(limit)")
        }
    }

    /// Whether keys sort as raw bytes (`memcmp`), which the order check compares by, and whether
    /// a key may repeat (`MDB_DUPSORT`): the database's own flags, which an open of an existing
    /// database without them does not show in ``Database/flags``.
    private func keyOrder() throws(LMDBError) -> (bytewise: Bool, duplicates: Bool) {
        if let order { return order }
        var flags: UInt32 = 0
        try handle.check(mdb_dbi_flags(handle.txn, database.dbi, &flags), "mdb_dbi_flags")
        let found = (
            bytewise: flags & UInt32(MDB_REVERSEKEY | MDB_INTEGERKEY) == 0, duplicates: flags & UInt32(MDB_DUPSORT) != 0
        )
        order = found
        return found
    }

    private func damaged(_ what: String) -> LMDBError {
        let error = LMDBError(
            code: MDB_CORRUPTED, operation: "mdb_cursor_get", path: handle.environment.path,
            reason: "\(what): its pages are damaged")
        if handle.token.failure == nil { handle.token.failure = error }
        return error
    }

    /// Deletes the entry the cursor stands at, in a write transaction; the cursor then stands at
    /// the entry after it, which ``current()`` gives (nil past the last). The corresponding C
    /// call is `mdb_cursor_del`. A range is deleted with a seek and this, not a seek a key.
    package func deleteCurrent() throws(LMDBError) {
        handle.checkLive()
        try handle.check(mdb_cursor_del(cursor, 0), "mdb_cursor_del")
    }

    /// Deletes the entry at the cursor and returns the one after it, nil past the last entry or
    /// when that was the database's last entry (LMDB then leaves the cursor unset).
    /// The corresponding C ops are `mdb_cursor_del`, then `MDB_GET_CURRENT`.
    package func deleteCurrentAndFollow() throws(LMDBError) -> Entry? {
        try deleteCurrent()
        var k = MDB_val()
        var v = MDB_val()
        let rc = mdb_cursor_get(cursor, &k, &v, MDB_GET_CURRENT)
        if rc == MDB_NOTFOUND || rc == EINVAL { return nil }
        try handle.check(rc, "mdb_cursor_get")
        return Entry(key: k.buffer, value: v.buffer)
    }

    /// Moves to the first entry. The corresponding C op is `MDB_FIRST`.
    package func first() throws(LMDBError) -> Entry? { try move(MDB_FIRST) }
    /// Moves to the last entry. The corresponding C op is `MDB_LAST`.
    package func last() throws(LMDBError) -> Entry? { try move(MDB_LAST) }
    /// Moves to the next entry (next duplicate first). The corresponding C op is `MDB_NEXT`.
    package func next() throws(LMDBError) -> Entry? { try move(MDB_NEXT) }
    /// Moves to the previous entry. The corresponding C op is `MDB_PREV`.
    package func previous() throws(LMDBError) -> Entry? { try move(MDB_PREV) }
    /// Moves to the first entry of the next key. The corresponding C op is `MDB_NEXT_NODUP`.
    package func nextKey() throws(LMDBError) -> Entry? { try move(MDB_NEXT_NODUP) }
    /// Moves to the next value of the current key. The corresponding C op is `MDB_NEXT_DUP`.
    package func nextDuplicate() throws(LMDBError) -> Entry? { try move(MDB_NEXT_DUP) }
    /// Moves to the last value of the current key. The corresponding C op is `MDB_LAST_DUP`.
    package func lastDuplicate() throws(LMDBError) -> Entry? {
        // MDB_LAST_DUP fills only the data; read the key back with MDB_GET_CURRENT.
        guard try move(MDB_LAST_DUP) != nil else { return nil }
        return try current()
    }
    /// The entry under the cursor. The corresponding C op is `MDB_GET_CURRENT`.
    package func current() throws(LMDBError) -> Entry? { try move(MDB_GET_CURRENT) }
    /// Moves to the first key greater than or equal to `key`. The corresponding C op is `MDB_SET_RANGE`.
    package func seek(atLeast key: [UInt8]) throws(LMDBError) -> Entry? { try move(MDB_SET_RANGE, key: key) }
    /// Moves to `key` exactly (its first value). The corresponding C op is `MDB_SET_KEY`.
    package func seek(exactly key: [UInt8]) throws(LMDBError) -> Entry? { try move(MDB_SET_KEY, key: key) }

    /// Moves to the pair (`key`, `value`) of a `duplicateSort` database; returns whether it is
    /// stored. One exact lookup however many values the key has; a cursor kept for many
    /// lookups allocates nothing for each. The corresponding C op is `MDB_GET_BOTH`.
    package func seek(exactly key: [UInt8], value: UnsafeRawBufferPointer) throws(LMDBError) -> Bool {
        handle.checkLive()
        guard !key.isEmpty else { return false }
        var v = MDB_val(value)
        var k = MDB_val()
        let rc = key.withUnsafeBytes { bytes in
            k = MDB_val(bytes)
            return mdb_cursor_get(cursor, &k, &v, MDB_GET_BOTH)
        }
        if handle.token.isReadOnly { try follow(MDB_GET_BOTH, found: rc == MDB_SUCCESS, notFound: rc == MDB_NOTFOUND, key: k.buffer) }
        if rc == MDB_NOTFOUND { return false }
        try handle.check(rc, "mdb_cursor_get(MDB_GET_BOTH)")
        return true
    }

    /// The number of values of the current key (`duplicateSort`). The corresponding C function is `mdb_cursor_count`.
    package func duplicateCount() throws(LMDBError) -> Int {
        handle.checkLive()
        var n = 0
        try handle.check(mdb_cursor_count(cursor, &n), "mdb_cursor_count")
        return n
    }
}

/// Entries of a database in key order, from a range or the duplicates of one key.
///
/// LMDB reports iteration errors only for a damaged file (or misuse): the sequence then ends
/// early and keeps the error in its transaction, which `Environment.read`/`write` throw when
/// their closure returns (``ReadableTransaction/checkIntact()`` throws it sooner). Use a
/// `Cursor` to handle them step by step.
package struct EntrySequence: Sequence {
    enum Mode {
        case range(KeyRange, reverse: Bool)
        case duplicates([UInt8])
    }

    let handle: TransactionHandle
    let database: Database
    let mode: Mode

    package func makeIterator() -> Iterator {
        Iterator(sequence: self)
    }

    /// Walks the cursor; positions it on the first call to `next()`.
    package struct Iterator: IteratorProtocol {
        private let sequence: EntrySequence
        private var cursor: Cursor?
        private var started = false
        private var finished = false

        init(sequence: EntrySequence) { self.sequence = sequence }

        package mutating func next() -> Entry? {
            if finished { return nil }
            do throws(LMDBError) {
                let entry: Entry?
                if !started {
                    started = true
                    let c = try Cursor(handle: sequence.handle, database: sequence.database)
                    cursor = c
                    entry = try start(c)
                } else {
                    entry = try step(cursor!)
                }
                guard let entry, inBounds(entry) else {
                    finished = true
                    cursor = nil
                    return nil
                }
                return entry
            } catch {
                if sequence.handle.token.failure == nil { sequence.handle.token.failure = error }
                finished = true
                cursor = nil
                return nil
            }
        }

        private func start(_ c: Cursor) throws(LMDBError) -> Entry? {
            switch sequence.mode {
            case .duplicates(let key):
                return try c.seek(exactly: key)
            case .range(let range, reverse: false):
                guard let lower = range.lower, !lower.key.isEmpty else { return try c.first() }
                guard let e = try c.seek(atLeast: lower.key) else { return nil }
                if case .exclusive(let k) = lower, compareKeys(e.key, k) == 0 { return try c.nextKey() }
                return e
            case .range(let range, reverse: true):
                guard let upper = range.upper, !upper.key.isEmpty else {
                    // No key sorts below the empty key: an exclusive empty upper bound is empty.
                    if let upper = range.upper, case .exclusive = upper { return nil }
                    return try c.last()
                }
                guard let e = try c.seek(atLeast: upper.key) else { return try c.last() }
                let c0 = compareKeys(e.key, upper.key)
                if c0 == 0, case .inclusive = upper {
                    return sequence.database.flags.contains(.duplicateSort) ? try c.lastDuplicate() : e
                }
                return try c.previous()
            }
        }

        private func step(_ c: Cursor) throws(LMDBError) -> Entry? {
            switch sequence.mode {
            case .duplicates: try c.nextDuplicate()
            case .range(_, reverse: false): try c.next()
            case .range(_, reverse: true): try c.previous()
            }
        }

        private func inBounds(_ e: Entry) -> Bool {
            switch sequence.mode {
            case .duplicates: true
            case .range(let range, reverse: false): range.isBelowUpper(e.key)
            case .range(let range, reverse: true): range.isAboveLower(e.key)
            }
        }
    }
}

@available(*, unavailable)
extension EntrySequence: Sendable {}
