import Foundation
import Synchronization

/// A serial executor backed by one dedicated OS thread.
///
/// The store's writer actor runs here so that LMDB write transactions (which must begin and
/// commit on one thread) and the fsync of each commit never block Swift's cooperative pool.
final class WriterThread: SerialExecutor, @unchecked Sendable {
    // @unchecked: `jobs` and `stopping` are only touched under `condition`'s lock.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopping = false
    private var thread: Thread?

    init(name: String) {
        // The thread keeps the executor alive until `stop()`.
        let thread = Thread { self.runLoop() }
        thread.name = name
        thread.stackSize = 4 << 20
        self.thread = thread
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        condition.lock()
        jobs.append(unowned)
        condition.signal()
        condition.unlock()
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Lets the thread finish its queued jobs and exit.
    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    private func runLoop() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty && stopping {
                condition.unlock()
                return
            }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedSerialExecutor()) }
        }
    }
}
