import Dispatch
import Synchronization

/// Runs async work to completion from the synchronous harness, blocking the calling thread.
///
/// The runner and its timing are synchronous; the store's writes are `async`. The caller (the
/// main thread) is not one of the concurrency pool's threads, so blocking it cannot starve the task.
func blockingAwait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let result: Result<T, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        outcome.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    guard let result = outcome.withLock({ $0 }) else { throw BenchError("async work ended without a result") }
    return try result.get()
}
