import QuireCodec
internal import QuireLMDB
import Synchronization

extension Store {
    /// Runs `body` in one write transaction on the writer, and commits it.
    ///
    /// The body runs synchronously from begin to commit (no `await` is possible inside), on
    /// the writer's thread. It may run more than once if the map has to grow, so it must change
    /// state only through the transaction. Throwing rolls everything back.
    @discardableResult
    public func write<R: Sendable>(_ body: @escaping @Sendable (borrowing StoreTransaction) throws -> R) async throws -> R {
        try await writer.run { try self.writeNow(body) }
    }

    /// Stores `value` (an upsert), batched with other concurrent single writes into one
    /// transaction (group commit). Returns once committed — and on disk in durable mode.
    /// An error concerns this value only; the others in the batch still commit.
    public func put<V>(_ value: V, in collection: StoreCollection<V>) async throws(StoreError) {
        try await enqueue("\(path): writing into '\(collection.name)'") { txn in try txn.put(value, in: collection) }
    }

    /// Deletes the value under `key`, batched like `put`.
    public func delete<V>(_ key: StoreKey, from collection: StoreCollection<V>) async throws(StoreError) {
        try await enqueue("\(path): deleting \(key) from '\(collection.name)'") { txn in
            _ = try txn.delete(key, from: collection)
        }
    }

    private func enqueue(
        _ what: @autoclosure () -> String, _ apply: @escaping @Sendable (borrowing StoreTransaction) throws -> Void
    ) async throws(StoreError) {
        try ensureWritable()
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if commitQueue.append(.init(apply: apply, continuation: continuation)) {
                    Task { try? await self.writer.run { self.flushPending() } }
                }
            }
        } catch {
            throw StoreError.wrap(error, what())
        }
    }

    func ensureWritable() throws(StoreError) {
        if options.readOnly { throw StoreError(.readOnly, "\(environment.path): the store is open read-only") }
    }

    /// Commits queued single writes, batch after batch, until the queue is empty. Runs on the writer.
    func flushPending() {
        while true {
            let batch = commitQueue.drain()
            if batch.isEmpty { return }
            let outcome = BatchOutcome()
            var committed = false
            // A storage error inside one write aborts the transaction: retry without that write.
            while !committed {
                do {
                    try writeNow { txn in
                        outcome.storageFailure = nil
                        for (i, item) in batch.enumerated() where outcome.failed[i] == nil {
                            do {
                                try item.apply(txn)
                            } catch let error as StoreError where error.underlying is LMDBError || txn.state.poisoned != nil {
                                // LMDB failed inside the transaction, or the write threw with part
                                // of its work written: it cannot commit.
                                outcome.storageFailure = (i, error)
                                throw error
                            } catch {
                                outcome.failed[i] = error  // nothing was written for it (validation, encoding)
                            }
                        }
                    }
                    committed = true
                } catch {
                    if let (i, error) = outcome.storageFailure {
                        outcome.failed[i] = error
                    } else {
                        // The commit itself failed: every write of the batch failed with it.
                        for i in batch.indices where outcome.failed[i] == nil {
                            outcome.failed[i] = StoreError.wrap(error, "commit failed")
                        }
                        committed = true
                    }
                }
            }
            let failed = outcome.failed
            counters.withLock { $0.groupedWrites += batch.count }
            for (i, item) in batch.enumerated() {
                if let error = failed[i] {
                    item.continuation.resume(throwing: error)
                } else {
                    item.continuation.resume()
                }
            }
        }
    }

    /// The write path: one LMDB transaction, the field table kept in step with other writers,
    /// new field names persisted with the records, changes published after the commit.
    /// `relaxed`: a commit of a bulk load with relaxed durability, which skips its sync.
    @available(*, noasync)
    func writeNow<R>(relaxed: Bool = false, _ body: (borrowing StoreTransaction) throws -> R) throws -> R {
        let (result, changed) = try writeCommitting(body)
        // A relaxed bulk load turns the environment's syncs off: every other commit meanwhile
        // (a write, a group commit, a durable load's chunk) is synced here before it returns,
        // and a failed sync is its caller's error (group commits ignored one).
        if !relaxed, relaxedBulkLoads.withLock({ $0 > 0 }) {
            do throws(LMDBError) {
                try environment.sync()
                commitsSyncedBesideRelaxedLoads.add(1, ordering: .relaxed)
            } catch {
                throw StoreError(.storage, "\(environment.path): committed, but not synced to disk", underlying: error)
            }
        }
        // Compression dictionaries are trained after the commit that gave them enough records.
        if !changed.isEmpty { trainDueDictionaries(changed) }
        return result
    }

    /// ``writeNow(_:)`` without what follows a commit; also returns the collections it changed.
    @available(*, noasync)
    private func writeCommitting<R>(_ body: (borrowing StoreTransaction) throws -> R) throws -> (R, [String]) {
        try ensureWritable()
        precondition(!isInsideWrite, "Quire: a write transaction inside a write transaction would wait for itself")
        writeDepth.withLock { $0 += 1 }
        defer { writeDepth.withLock { $0 -= 1 } }
        let box = StateBox()
        let result: R
        do {
            result = try runWrite(body, box)
        } catch let error as LMDBError {
            // A closed store, a map that cannot grow and a damaged page have codes of their own
            // (a write to a closed store said `.storage`, a disk's trouble); storage failures (a
            // full disk shows up as ENOSPC or EIO at commit) keep LMDB's code and hint, with the
            // store named. `MDB_BAD_TXN` follows any failure inside a transaction: no damage.
            if error == .closed || error == .mapFull || (error.isCorruption && error != .badTransaction) {
                throw StoreError.wrap(error, "\(environment.path): write failed")
            }
            throw StoreError(.storage, "\(environment.path): write failed", underlying: error)
        }
        guard let state = box.state else { return (result, []) }
        adoptFields(state.fields)
        counters.withLock { $0.commits += 1 }
        commitEpoch.add(1, ordering: .releasing)
        return (result, state.changes.collections)
    }

    private func runWrite<R>(_ body: (borrowing StoreTransaction) throws -> R, _ box: StateBox) throws -> R {
        try environment.write { txn in
            // Another process may have added field names since we loaded the table.
            var table = fields
            if try txn.count(of: fieldsDB) > table.count {
                table = try Store.loadFieldTable(txn, fieldsDB, meta: metaDB, path: environment.path)
            }
            try adoptStoredDictionaries(txn)  // and dictionaries: an upsert decodes the old record
            let writeState = WriteState(fields: table)
            box.state = writeState
            let storeTxn = StoreTransaction(raw: txn.raw, store: self, state: writeState)
            let result = try body(storeTxn)
            // An operation the body caught after it wrote part of its work: nothing commits.
            if let poisoned = writeState.poisoned { throw poisoned }
            try writeState.flushPendingSearch(txn)  // the puts' full-text postings, all at once
            try storeTxn.persistNewFields()
            try appendToFeed(writeState.changes.changes, txn)
            return result
        }
    }
}

/// Per-write results of one group commit, filled inside the transaction closure.
private final class BatchOutcome {
    var failed: [Int: any Error] = [:]
    var storageFailure: (Int, any Error)?
}

/// The state of the last attempt of a write (the body reruns when the map grows).
private final class StateBox {
    var state: WriteState?
}
