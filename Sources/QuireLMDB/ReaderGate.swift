#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps the map still while read transactions look at it.
///
/// LMDB's `mdb_env_set_mapsize` remaps the file, so it "may only be called if there are no
/// transactions active in the current process". Every read transaction holds the gate shared
/// from begin/renew to reset; growing the map holds it exclusively. Waiting growers block new
/// readers so a steady stream of reads cannot starve them. The gate also caps the number of
/// concurrently active readers below LMDB's reader table size, so many tasks wait for a slot
/// instead of failing with `MDB_READERS_FULL`.
final class ReaderGate: @unchecked Sendable {
    // pthread objects need stable addresses, so they live in allocated memory.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var active = 0
    private var exclusiveWaiting = 0
    private var exclusive = false
    let limit: Int

    init(limit: Int) {
        self.limit = max(1, limit)
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// The number of readers inside the gate now.
    var activeReaders: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return active
    }

    func enterShared() {
        pthread_mutex_lock(mutex)
        while exclusive || exclusiveWaiting > 0 || active >= limit {
            pthread_cond_wait(condition, mutex)
        }
        active += 1
        pthread_mutex_unlock(mutex)
    }

    func leaveShared() {
        pthread_mutex_lock(mutex)
        active -= 1
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    func withExclusive<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        exclusiveWaiting += 1
        while exclusive || active > 0 {
            pthread_cond_wait(condition, mutex)
        }
        exclusiveWaiting -= 1
        exclusive = true
        pthread_mutex_unlock(mutex)
        defer {
            pthread_mutex_lock(mutex)
            exclusive = false
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return try body()
    }
}
