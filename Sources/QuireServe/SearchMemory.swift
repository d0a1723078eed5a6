#if canImport(Glibc)
    import Glibc
#endif
import CMalloc
import Synchronization

/// A search merges postings in buffers that can reach a few hundred megabytes (bounded per
/// search); glibc keeps what is freed for the next allocations of the thread's heap, so a
/// server that answered one heavy search held it for ever. It goes back after each search, at
/// most a few times a second (a trim walks the heaps).
enum SearchMemory {
    /// The monotonic milliseconds of the last trim.
    private static let lastTrim = Atomic<Int64>(0)

    static func returnFreed() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let milliseconds = Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
        let last = lastTrim.load(ordering: .relaxed)
        guard milliseconds - last >= 250,
            lastTrim.compareExchange(expected: last, desired: milliseconds, ordering: .relaxed).exchanged
        else { return }
        _ = quire_malloc_trim()
    }
}
