internal import CLMDB
import Synchronization

/// Read transactions kept reset for reuse, so a read costs no `mdb_txn_begin` and no new
/// reader slot. lmdb.h: "mdb_txn_reset … allows the transaction to be reused with
/// mdb_txn_renew() … The reader lock is kept".
final class ReadTransactionPool: Sendable {
    // OpaquePointer is not Sendable; reset handles are owned by the pool, one user at a time.
    private struct Handle: @unchecked Sendable { let txn: OpaquePointer }
    private let handles = Mutex<[Handle]>([])
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// A reset transaction to renew, if one is waiting.
    func take() -> OpaquePointer? {
        handles.withLock { $0.popLast()?.txn }
    }

    /// Resets `txn` and keeps it, or aborts it when the pool is full.
    func recycle(_ txn: OpaquePointer) {
        mdb_txn_reset(txn)
        let kept = handles.withLock { list in
            guard list.count < capacity else { return false }
            list.append(Handle(txn: txn))
            return true
        }
        if !kept { mdb_txn_abort(txn) }
    }

    /// Aborts every kept transaction (before the environment closes).
    func drain() {
        let all = handles.withLock { list in
            defer { list.removeAll() }
            return list
        }
        for handle in all { mdb_txn_abort(handle.txn) }
    }

    /// Number of reset transactions held.
    var count: Int { handles.withLock { $0.count } }
}
