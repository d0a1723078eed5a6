internal import CThreadDepth
import Synchronization

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
///
/// A reader enters and leaves with one atomic operation each on a word that counts readers,
/// sleepers and exclusive requests; only a thread that must wait, or must wake one, takes the
/// mutex. (A mutex taken by every read made readers on two cores pass its line back and forth.)
/// A thread about to sleep counts itself in the word while it holds the mutex, and looks again
/// before it waits; a thread that frees the gate sees that count in the value its own atomic
/// operation replaced, and wakes the sleepers under the mutex, so no wake-up is lost.
final class ReaderGate: @unchecked Sendable {
    // @unchecked: the word is atomic, and the pthread objects are only used as pthreads allow.
    private let word = Atomic<Int>(0)
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    let limit: Int

    /// The word's fields: active readers, sleeping threads, and exclusive requests (waiting or
    /// holding), 20 bits each, and a bit for the exclusive holder.
    private static let readerUnit = 1
    private static let sleeperUnit = 1 << 20
    private static let requestUnit = 1 << 40
    private static let heldBit = 1 << 62
    private static let fieldMask = (1 << 20) - 1

    private static func readers(_ word: Int) -> Int { word & fieldMask }
    private static func sleepers(_ word: Int) -> Int { (word >> 20) & fieldMask }
    private static func requests(_ word: Int) -> Int { (word >> 40) & fieldMask }

    init(limit: Int) {
        self.limit = min(max(1, limit), Self.fieldMask)
        // pthread objects need stable addresses, so they live in allocated memory.
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
    var activeReaders: Int { Self.readers(word.load(ordering: .acquiring)) }

    /// The number of exclusive requests, waiting or holding the gate.
    var exclusiveRequests: Int { Self.requests(word.load(ordering: .acquiring)) }

    /// The number of threads waiting to enter, shared or exclusive.
    var waitingThreads: Int { Self.sleepers(word.load(ordering: .acquiring)) }

    /// This gate's identity in the thread-local depth table.
    private var identity: UnsafeRawPointer { UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()) }

    /// True while this thread is inside the gate shared (a read of this environment is open on it).
    var isHeldByThisThread: Bool { quire_depth_of(identity) > 0 }

    func enterShared() {
        // Counted before it is in: only this thread reads its depth, and not while it waits here.
        // A thread inside already enters again at once: waiting behind an exclusive request,
        // which waits for this thread's outer read to leave, would never end; so would waiting
        // for the reader limit. (The inner read takes a reader slot of its own: with every slot
        // of LMDB's table taken, its begin waits a few seconds for one and then throws.)
        if quire_depth_enter(identity) > 0 {
            word.wrappingAdd(Self.readerUnit, ordering: .acquiring)
            return
        }
        var current = word.load(ordering: .relaxed)
        while canEnterShared(current) {
            let (entered, seen) = word.compareExchange(
                expected: current, desired: current + Self.readerUnit, ordering: .acquiring)
            if entered { return }
            current = seen
        }
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        wait(until: canEnterShared) {
            word.compareExchange(expected: $0, desired: $0 + Self.readerUnit, ordering: .acquiring).exchanged
        }
    }

    func leaveShared() {
        quire_depth_leave(identity)
        let before = word.wrappingSubtract(Self.readerUnit, ordering: .releasing).oldValue
        wakeSleepers(ifAnyIn: before)
    }

    /// Runs `body` with the gate to itself. The caller makes sure this thread is not inside the
    /// gate shared (``isHeldByThisThread``): it would wait for itself.
    func withExclusive<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        precondition(!isHeldByThisThread, "QuireLMDB: exclusive use of the map from inside a read on the same thread")
        // Counted first, so that readers arriving from now on wait behind it.
        word.wrappingAdd(Self.requestUnit, ordering: .sequentiallyConsistent)
        pthread_mutex_lock(mutex)
        wait(until: { Self.readers($0) == 0 && $0 & Self.heldBit == 0 }) {
            word.compareExchange(expected: $0, desired: $0 | Self.heldBit, ordering: .acquiring).exchanged
        }
        pthread_mutex_unlock(mutex)
        defer {
            let before = word.wrappingSubtract(Self.heldBit + Self.requestUnit, ordering: .releasing).oldValue
            wakeSleepers(ifAnyIn: before)
        }
        return try body()
    }

    /// A reader may enter while no exclusive request waits or holds, and the limit has room.
    private func canEnterShared(_ word: Int) -> Bool {
        Self.requests(word) == 0 && Self.readers(word) < limit
    }

    /// Waits, with the mutex held, until `ready` holds for the word and `claim` succeeds on it.
    private func wait(until ready: (Int) -> Bool, claim: (Int) -> Bool) {
        while true {
            let current = word.load(ordering: .acquiring)
            if ready(current) {
                if claim(current) { return }
                continue
            }
            // Counted as a sleeper before the last look, so whoever frees the gate after it wakes us.
            let counted = word.wrappingAdd(Self.sleeperUnit, ordering: .sequentiallyConsistent).newValue
            if !ready(counted) { pthread_cond_wait(condition, mutex) }
            word.wrappingSubtract(Self.sleeperUnit, ordering: .sequentiallyConsistent)
        }
    }

    /// Wakes the sleepers, if the word before a change that may let them in counted any.
    private func wakeSleepers(ifAnyIn word: Int) {
        guard Self.sleepers(word) > 0 else { return }
        pthread_mutex_lock(mutex)
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }
}
