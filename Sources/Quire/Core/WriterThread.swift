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
    private var calls: [SynchronousCall] = []
    private var stopping = false
    /// The writer thread's id, set by the thread itself before it takes any job.
    private let threadID = Mutex<pthread_t?>(nil)

    /// Starts the thread; throws when the system cannot make one (a store without its writer
    /// would wait for ever on its first write).
    init(name: String) throws(OSThread.StartError) {
        // The thread keeps the executor alive until `stop()`.
        try OSThread.start(name: name, stackSize: 4 << 20) {
            self.threadID.withLock { $0 = pthread_self() }
            self.runLoop()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        condition.lock()
        jobs.append(unowned)
        condition.signal()
        condition.unlock()
    }

    /// Whether the caller runs on this executor's thread.
    var isCurrent: Bool {
        guard let id = threadID.withLock({ $0 }) else { return false }
        return pthread_equal(id, pthread_self()) != 0
    }

    /// Runs `work` on the writer thread and waits for it: for the few synchronous APIs that
    /// write (declaring collections), so that every write transaction still begins and commits
    /// on this one thread. On the writer thread itself, runs it in place.
    func runSync<R>(_ work: () throws -> R) throws -> R {
        if isCurrent { return try work() }
        return try withoutActuallyEscaping(work) { work in
            nonisolated(unsafe) var result: Result<R, any Error>?
            nonisolated(unsafe) let body = work
            let call = SynchronousCall { result = Result { try body() } }
            condition.lock()
            calls.append(call)
            condition.signal()
            condition.unlock()
            call.done.wait()
            return try result!.get()
        }
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
            while jobs.isEmpty && calls.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty && calls.isEmpty && stopping {
                condition.unlock()
                return
            }
            let batch = jobs
            let pending = calls
            jobs.removeAll(keepingCapacity: true)
            calls.removeAll(keepingCapacity: true)
            condition.unlock()
            for call in pending { call.run() }
            for job in batch { job.runSynchronously(on: asUnownedSerialExecutor()) }
        }
    }
}

/// A closure another thread waits for: the writer runs it, releases it, then wakes the caller
/// (which may not return before the closure it lent is gone).
private final class SynchronousCall: @unchecked Sendable {
    // @unchecked: `work` is set once and cleared by the writer thread before `done` is signalled.
    private var work: (() -> Void)?
    let done = DispatchSemaphore(value: 0)

    init(_ work: @escaping () -> Void) { self.work = work }

    func run() {
        work?()
        work = nil
        done.signal()
    }
}
