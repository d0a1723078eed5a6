import Foundation
import Synchronization
import Testing
@testable import QuireLMDB

/// The gate that keeps the map still under readers: readers enter and leave without its mutex,
/// so these check that an exclusive holder never overlaps a reader, that the reader limit holds,
/// and that a waiting exclusive request holds back new readers.
@Suite struct ReaderGateTests {
    @Test func anExclusiveHolderNeverOverlapsAReader() {
        let gate = ReaderGate(limit: 64)
        let inside = Atomic<Int>(0)
        let holding = Atomic<Bool>(false)
        let overlaps = Atomic<Int>(0)
        let exclusiveRuns = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 5) { thread in
            if thread == 0 {
                for _ in 0..<300 {
                    gate.withExclusive {
                        holding.store(true, ordering: .sequentiallyConsistent)
                        if inside.load(ordering: .sequentiallyConsistent) != 0 { overlaps.add(1, ordering: .relaxed) }
                        usleep(20)  // long enough for a reader that got in wrongly to be seen
                        if inside.load(ordering: .sequentiallyConsistent) != 0 { overlaps.add(1, ordering: .relaxed) }
                        holding.store(false, ordering: .sequentiallyConsistent)
                    }
                    exclusiveRuns.add(1, ordering: .relaxed)
                }
            } else {
                for _ in 0..<20_000 {
                    gate.enterShared()
                    inside.add(1, ordering: .sequentiallyConsistent)
                    if holding.load(ordering: .sequentiallyConsistent) { overlaps.add(1, ordering: .relaxed) }
                    inside.subtract(1, ordering: .sequentiallyConsistent)
                    gate.leaveShared()
                }
            }
        }
        #expect(overlaps.load(ordering: .relaxed) == 0)
        #expect(exclusiveRuns.load(ordering: .relaxed) == 300)
        #expect(gate.activeReaders == 0)
        #expect(gate.exclusiveRequests == 0)
    }

    @Test func readersBeyondTheLimitWaitForASlot() {
        let gate = ReaderGate(limit: 2)
        let inside = Atomic<Int>(0)
        let most = Atomic<Int>(0)
        let finished = DispatchSemaphore(value: 0)
        // Threads of their own (a dispatch pool runs only as many as there are cores).
        for _ in 0..<8 {
            Thread.detachNewThread {
                for _ in 0..<100 {
                    gate.enterShared()
                    let now = inside.add(1, ordering: .sequentiallyConsistent).newValue
                    most.max(now, ordering: .relaxed)
                    usleep(200)
                    inside.subtract(1, ordering: .sequentiallyConsistent)
                    gate.leaveShared()
                }
                finished.signal()
            }
        }
        for _ in 0..<8 { finished.wait() }
        #expect(most.load(ordering: .relaxed) <= 2)
        #expect(most.load(ordering: .relaxed) == 2)  // eight threads that sleep inside fill it
        #expect(gate.activeReaders == 0)
    }

    @Test func aWaitingExclusiveRequestHoldsBackNewReaders() {
        let gate = ReaderGate(limit: 8)
        let order = Mutex<[String]>([])
        let finished = DispatchSemaphore(value: 0)
        gate.enterShared()  // a reader the exclusive request waits for
        Thread.detachNewThread {
            gate.withExclusive { order.withLock { $0.append("exclusive") } }
            finished.signal()
        }
        #expect(waitUntil { gate.exclusiveRequests == 1 && gate.waitingThreads == 1 })
        Thread.detachNewThread {
            gate.enterShared()
            order.withLock { $0.append("reader") }
            gate.leaveShared()
            finished.signal()
        }
        // The new reader waits too, though the limit has room: the request came first.
        #expect(waitUntil { gate.waitingThreads == 2 || !order.withLock { $0 }.isEmpty })
        #expect(order.withLock { $0 }.isEmpty)
        gate.leaveShared()
        finished.wait()
        finished.wait()
        #expect(order.withLock { $0 } == ["exclusive", "reader"])
        #expect(gate.activeReaders == 0 && gate.exclusiveRequests == 0 && gate.waitingThreads == 0)
    }

    /// A read begun inside a read on the same thread does not wait behind an exclusive request
    /// (a remap): the request waits for the outer read, so the inner one waited for ever.
    @Test func aThreadInsideEntersAgainPastAWaitingExclusiveRequest() {
        let gate = ReaderGate(limit: 1)
        let order = Mutex<[String]>([])
        let heldElsewhere = Atomic<Bool>(true)
        let finished = DispatchSemaphore(value: 0)
        gate.enterShared()
        #expect(gate.isHeldByThisThread)
        Thread.detachNewThread {
            // Checked here, expected on the test's thread (no test runs on this one).
            heldElsewhere.store(gate.isHeldByThisThread, ordering: .relaxed)
            gate.withExclusive { order.withLock { $0.append("exclusive") } }
            finished.signal()
        }
        #expect(waitUntil { gate.exclusiveRequests == 1 && gate.waitingThreads == 1 })
        gate.enterShared()  // past the request and past the limit of one: its slot is the outer's
        order.withLock { $0.append("inner") }
        #expect(gate.activeReaders == 2)
        gate.leaveShared()
        #expect(gate.isHeldByThisThread)
        #expect(order.withLock { $0 } == ["inner"])
        gate.leaveShared()
        #expect(!gate.isHeldByThisThread)
        finished.wait()
        let wasHeldElsewhere = heldElsewhere.load(ordering: .relaxed)
        #expect(!wasHeldElsewhere)  // the depth is each thread's own
        #expect(order.withLock { $0 } == ["inner", "exclusive"])
        #expect(gate.activeReaders == 0 && gate.exclusiveRequests == 0)
    }

    /// Polls `condition` for up to ten seconds; whether it came true.
    private func waitUntil(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while !condition() {
            if Date() > deadline { return false }
            usleep(200)
        }
        return true
    }
}
