internal import CLMDB
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Read transactions kept reset for reuse, so a read costs no `mdb_txn_begin` and no new
/// reader slot. lmdb.h: "mdb_txn_reset … allows the transaction to be reused with
/// mdb_txn_renew() … The reader lock is kept".
///
/// The pool is split into shards, and a thread takes from and gives back to its own: with one
/// shared list, every read on every core took the same lock twice, and threads reading at once
/// spent their time handing its cache line to each other.
final class ReadTransactionPool: Sendable {
    private let shards: [Shard]
    /// How many reset transactions the pool keeps at most, over all its shards.
    let capacity: Int

    init(capacity: Int) {
        let count = max(1, min(Self.shardCount, capacity))
        self.capacity = capacity
        shards = (0..<count).map { number in
            // The remainder goes to the first shards, so the shards keep `capacity` together.
            Shard(capacity: capacity / count + (number < capacity % count ? 1 : 0))
        }
    }

    /// A reset transaction to renew, if the thread's shard holds one.
    func take() -> OpaquePointer? {
        shards[Self.threadShard % shards.count].take()
    }

    /// A reset transaction from whichever shard holds one: for a thread whose `mdb_txn_begin`
    /// found the reader table full while other threads' shards keep idle transactions (and
    /// their slots).
    func takeFromAnyShard() -> OpaquePointer? {
        for shard in shards {
            if let txn = shard.take() { return txn }
        }
        return nil
    }

    /// Resets `txn` and keeps it in the thread's shard, or aborts it when that shard is full.
    func recycle(_ txn: OpaquePointer) {
        mdb_txn_reset(txn)
        if !shards[Self.threadShard % shards.count].keep(txn) { mdb_txn_abort(txn) }
    }

    /// Aborts every kept transaction (before the environment closes).
    func drain() {
        for shard in shards {
            for txn in shard.removeAll() { mdb_txn_abort(txn) }
        }
    }

    /// Number of reset transactions held.
    var count: Int { shards.reduce(0) { $0 + $1.count } }

    /// Shards a pool has at most: more than the cores of most machines that run it, so that
    /// threads seldom share one.
    static let shardCount = 16

    /// One part of the pool. @unchecked: `handles` is only touched under `lock`, which has
    /// cache lines of its own.
    private final class Shard: @unchecked Sendable {
        private let lock = ThreadLock()
        private var handles: [OpaquePointer] = []
        private let capacity: Int

        init(capacity: Int) { self.capacity = capacity }

        func take() -> OpaquePointer? { lock.withLock { handles.popLast() } }

        func keep(_ txn: OpaquePointer) -> Bool {
            lock.withLock {
                guard handles.count < capacity else { return false }
                handles.append(txn)
                return true
            }
        }

        func removeAll() -> [OpaquePointer] {
            lock.withLock {
                defer { handles.removeAll() }
                return handles
            }
        }

        var count: Int { lock.withLock { handles.count } }
    }

    /// The shard number of the calling thread, given out in turn as threads first ask, so that
    /// the first threads to read each have their own.
    private static var threadShard: Int {
        if let stored = pthread_getspecific(shardKey) { return Int(bitPattern: stored) - 1 }
        let turn = UInt(bitPattern: nextShard.wrappingAdd(1, ordering: .relaxed).oldValue)
        let number = Int(turn % UInt(shardCount))
        // Stored plus one: a thread's first value is nil.
        pthread_setspecific(shardKey, UnsafeRawPointer(bitPattern: number + 1))
        return number
    }

    private static let shardKey: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "QuireLMDB: pthread_key_create failed (\(status))")
        return key
    }()

    private static let nextShard = Atomic<Int>(0)
}
