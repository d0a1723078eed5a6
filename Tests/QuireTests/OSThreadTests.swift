import Foundation
import Synchronization
import Testing

@testable import Quire

/// The store's threads report a failure to start: Foundation's `Thread.start()` failed silently
/// (under `ulimit -v`), and verify, dump and load waited for ever for work that never ran.
@Suite struct OSThreadTests {
    @Test func aThreadRunsItsWorkAndAFailureToStartIsThrown() throws {
        let ran = DispatchSemaphore(value: 0)
        let name = Mutex<String?>(nil)
        try OSThread.start(name: "quire.test") {
            name.withLock { $0 = Thread.current.name }
            ran.signal()
        }
        #expect(ran.wait(timeout: .now() + 600) == .success)
        #expect(name.withLock { $0 } == "quire.test")
        // A stack no address space can hold: the thread cannot be made, and the work never runs.
        let never = Mutex(false)
        #expect(throws: OSThread.StartError.self) {
            try OSThread.start(stackSize: 1 << 50) { never.withLock { $0 = true } }
        }
        #expect(!never.withLock { $0 })
    }

    /// Work that cannot get a thread of its own runs in the caller's instead of never.
    @Test func backgroundWorkWithoutAThreadRunsInPlace() {
        let work = BackgroundWork(stackSize: 1 << 50) { 6 * 7 }
        #expect(work.wait() == 42)
    }
}
