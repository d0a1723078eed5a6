internal import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Environment {
    /// Runs `body` in a read-only snapshot and returns its result.
    ///
    /// Reads run on any thread, concurrently with each other and with the writer. The
    /// transaction is recycled (`mdb_txn_reset`/`mdb_txn_renew`), so a read takes no new reader
    /// slot. `body` is synchronous, so the snapshot never spans a suspension point; calling
    /// this from async code is fine (reads are short and never wait for the writer).
    /// `body` must not start another transaction.
    @discardableResult
    package func read<R>(_ body: (borrowing ReadTransaction) throws -> R) throws -> R {
        let txn = try enterRead()
        let token = TransactionToken(readOnly: true)
        defer {
            token.end()
            readerPool.recycle(txn)
            gate.leaveShared()
        }
        let result: R
        do {
            result = try body(ReadTransaction(raw: TransactionHandle(txn: txn, token: token, environment: self)))
        } catch {
            // A damaged page explains whatever failed after it.
            if let failure = token.failure { throw failure }
            throw error
        }
        if let failure = token.failure { throw failure }
        return result
    }

    /// Enters the gate and returns an active read transaction; on error the gate is left.
    private func enterRead() throws(LMDBError) -> OpaquePointer {
        var busyWaits = 0
        var adoptions = 0
        while true {
            try enterGateOpen("read")
            var rc: Int32
            var txn: OpaquePointer?
            if let reused = readerPool.take() {
                rc = mdb_txn_renew(reused)
                if rc == MDB_SUCCESS {
                    txn = reused
                } else {
                    mdb_txn_abort(reused)
                }
            } else {
                rc = MDB_SUCCESS
            }
            if txn == nil && (rc == MDB_SUCCESS || rc != MDB_MAP_RESIZED) {
                rc = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
            }
            if rc == MDB_READERS_FULL, let idle = readerPool.takeFromAnyShard() {
                // Reset transactions kept in other threads' shards hold slots: renew one of them.
                rc = mdb_txn_renew(idle)
                if rc == MDB_SUCCESS { txn = idle } else { mdb_txn_abort(idle) }
            }
            if rc == MDB_SUCCESS, let txn { return txn }
            gate.leaveShared()
            switch rc {
            case MDB_MAP_RESIZED:
                try adoptMapSize(attempt: &adoptions)
            case MDB_READERS_FULL where busyWaits < 5000:
                // Other processes hold the table's slots: wait for one to free up.
                busyWaits += 1
                usleep(1000)
            default:
                try check(rc, "mdb_txn_begin", path: path)
            }
        }
    }

    /// Runs `body` in a write transaction and commits it when `body` returns.
    ///
    /// If `body` throws, the transaction is aborted and the error rethrown. When the map fills
    /// (`MDB_MAP_FULL`) the transaction is aborted, the map grows and `body` **runs again** from
    /// the start, so `body` must only change state through the transaction. Writes from several
    /// threads are serialized. The commit is durable when it returns unless the durability is
    /// relaxed. `body` must not start another transaction.
    @discardableResult
    @available(*, noasync, message: "LMDB write transactions must begin and commit on one thread")
    package func write<R>(_ body: (borrowing WriteTransaction) throws -> R) throws -> R {
        try ensureOpen("write")
        if options.readOnly {
            throw LMDBError(code: EACCES, operation: "write", path: path, hint: "the environment is open read-only")
        }
        return try writeLock.withLock { () throws -> R in
            // Again under the lock: a close() that began after the check above waits for this
            // lock, and may have freed the environment before it was ours.
            try ensureOpen("write")
            var growths = 0
            var adoptions = 0
            clearDeadReadersIfDue()
            while true {
                var txn: OpaquePointer?
                // In the reader gate: a reader adopting a map another process grew remaps only
                // with the gate to itself, and mdb_txn_begin reads the meta pages in the map.
                try enterGateOpen("mdb_txn_begin")
                let rc = WriterLockWait.during { mdb_txn_begin(handle, nil, 0, &txn) }
                gate.leaveShared()
                if rc == MDB_MAP_RESIZED {
                    try adoptMapSize(attempt: &adoptions)
                    continue
                }
                try check(rc, "mdb_txn_begin", path: path)
                guard let txn else { preconditionFailure("mdb_txn_begin returned no transaction") }
                let token = TransactionToken(readOnly: false)
                let result: R
                do {
                    result = try body(WriteTransaction(raw: TransactionHandle(txn: txn, token: token, environment: self)))
                } catch {
                    token.end()
                    mdb_txn_abort(txn)
                    if token.sawMapFull && growths < 40 {
                        growths += 1
                        try growMap()
                        continue
                    }
                    if let failure = token.failure { throw failure }
                    throw error
                }
                token.end()
                if let failure = token.failure {
                    mdb_txn_abort(txn)
                    throw failure
                }
                // > mdb_txn_commit: "The transaction handle is freed. It and its cursors must not
                // > be used again after this call" — also on failure, so never abort after it.
                let commit = mdb_txn_commit(txn)
                if commit == MDB_MAP_FULL && growths < 40 {
                    growths += 1
                    try growMap()
                    continue
                }
                try check(FullDisk.explain(commit, at: path), "mdb_txn_commit", path: path)
                return result
            }
        }
    }

    /// Doubles the map (by at most 4 GiB a step) while no transaction of this process is active.
    ///
    /// Called with the write lock held and no write transaction open; the exclusive gate waits
    /// for running readers to finish and holds new ones back until the map is remapped.
    func growMap() throws(LMDBError) {
        try gate.withExclusive { () throws(LMDBError) in
            try ensureOpen("grow map")
            var raw = MDB_envinfo()
            try check(mdb_env_info(handle, &raw), "mdb_env_info", path: path)
            let current = raw.me_mapsize
            let next = min(current + min(current, 4 << 30), options.maxMapSize)
            guard next > current else {
                throw LMDBError(
                    code: MDB_MAP_FULL, operation: "grow map", path: path,
                    hint: "the map reached maxMapSize (\(options.maxMapSize) bytes)")
            }
            // > mdb_env_set_mapsize: "It may be called at later times if no transactions are
            // > active in this process."
            try remap(to: next)
        }
        noteGrowth()
    }

    /// Adopts a map size grown by another process (`MDB_MAP_RESIZED`), counting the attempts of
    /// one begin: a begin that still finds the map too small after several adoptions meets a
    /// meta page naming pages beyond the file (a damaged one), and would retry for ever.
    func adoptMapSize(attempt: inout Int) throws(LMDBError) {
        attempt += 1
        if attempt > 8 {
            throw LMDBError(
                code: MDB_CORRUPTED, operation: "mdb_txn_begin", path: path,
                hint: "the newest meta page names more pages than the map can hold after adopting the file's size: the file is damaged; verify it and restore a backup")
        }
        if gate.isHeldByThisThread {
            throw LMDBError(
                code: MDB_MAP_RESIZED, operation: "mdb_txn_begin", path: path,
                hint: "another process grew the map, and a read begun inside another read on the same thread cannot adopt the new size while the outer read is open: begin it after the outer read returns")
        }
        try gate.withExclusive { () throws(LMDBError) in
            // A reader holds no write lock: close() may have freed the environment meanwhile.
            try ensureOpen("adopt the map size")
            // > "This function may be called with a size of zero to adopt the new size."
            do throws(LMDBError) {
                try remap(to: 0)
            } catch {
                // EINVAL: this process's writer adopted the size first and its transaction is
                // running; the map is large enough already, and the caller's retry begins normally.
                guard error.code == EINVAL else { throw error }
            }
        }
    }

    /// Grows the map now so it has at least `bytes` free (before a large load, to avoid retries).
    package func reserveMapSpace(_ bytes: Int) throws(LMDBError) {
        try ensureOpen("reserve map space")
        try writeLock.withLock { () throws(LMDBError) in
            while true {
                let info = try self.info()
                if info.mapSize - info.usedBytes >= bytes || info.mapSize >= options.maxMapSize { return }
                try growMap()
            }
        }
    }
}
