internal import CLMDB
/// Read transactions kept reset for reuse, so a read costs no `mdb_txn_begin` and no new
/// reader slot. lmdb.h: "mdb_txn_reset … allows the transaction to be reused with
/// mdb_txn_renew() … The reader lock is kept".
final class ReadTransactionPool: @unchecked Sendable {
    // @unchecked: `handles` is only touched under `lock`; reset handles are owned by the pool,
    // one user at a time. A pthread mutex (not `Mutex`) so Thread Sanitizer sees the locking.
    private let lock = ThreadLock()
    private var handles: [OpaquePointer] = []
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// A reset transaction to renew, if one is waiting.
    func take() -> OpaquePointer? {
        lock.withLock { handles.popLast() }
    }

    /// Resets `txn` and keeps it, or aborts it when the pool is full.
    func recycle(_ txn: OpaquePointer) {
        mdb_txn_reset(txn)
        let kept = lock.withLock { () -> Bool in
            guard handles.count < capacity else { return false }
            handles.append(txn)
            return true
        }
        if !kept { mdb_txn_abort(txn) }
    }

    /// Aborts every kept transaction (before the environment closes).
    func drain() {
        let all = lock.withLock { () -> [OpaquePointer] in
            defer { handles.removeAll() }
            return handles
        }
        for txn in all { mdb_txn_abort(txn) }
    }

    /// Number of reset transactions held.
    var count: Int { lock.withLock { handles.count } }
}
