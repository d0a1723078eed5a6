import Foundation
import Synchronization

/// The peak of the process's anonymous resident memory (`RssAnon` in /proc/self/status) while
/// a body runs, sampled every 20 ms by a background thread. Unlike `ru_maxrss` it leaves out the
/// store's memory-mapped pages, which the kernel may drop at will: what "memory a load takes" means.
enum AnonymousMemory {
    /// The current `RssAnon`, in bytes (0 where /proc is not available).
    static func current() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("RssAnon:") {
            let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
            return kilobytes * 1024
        }
        return 0
    }

    /// Runs `body` and returns the highest `RssAnon` seen meanwhile.
    static func peak(during body: () throws -> Void) rethrows -> Int {
        let highest = Atomic<Int>(current())
        let running = Atomic<Bool>(true)
        let sampler = Thread {
            while running.load(ordering: .acquiring) {
                let now = current()
                var seen = highest.load(ordering: .relaxed)
                while now > seen {
                    let (exchanged, original) = highest.compareExchange(expected: seen, desired: now, ordering: .relaxed)
                    if exchanged { break }
                    seen = original
                }
                usleep(20_000)
            }
        }
        sampler.start()
        defer { running.store(false, ordering: .releasing) }
        try body()
        let last = current()
        return max(highest.load(ordering: .relaxed), last)
    }
}
