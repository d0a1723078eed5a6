import Testing
@testable import Quire

@Suite struct SearchQueryBuffersTests {
    @Test func aGivenArrayComesBackEmptyWithItsStorageAndSmallOnesAreLetGo() {
        let buffers = SearchQueryBuffers()
        let count = SearchQueryBuffers.minimumCount * 2
        var large = [UInt32](repeating: 7, count: count)
        let address = large.withUnsafeBufferPointer { $0.baseAddress }
        buffers.give(large)
        buffers.give(large)  // the same storage twice is kept once
        large = []
        let first = buffers.numbers(capacity: count)
        #expect(first.isEmpty)
        #expect(first.capacity >= count)
        #expect(first.withUnsafeBufferPointer { $0.baseAddress } == address)
        // Only one was kept: the next one is fresh.
        #expect(buffers.numbers(capacity: count).withUnsafeBufferPointer { $0.baseAddress } != address)
        buffers.give([UInt32](repeating: 1, count: 10))
        #expect(buffers.numbers(capacity: 5).capacity < SearchQueryBuffers.minimumCount)
    }

    @Test func thePoolKeepsAtMostItsBytesDroppingTheSmallestFirst() {
        let buffers = SearchQueryBuffers()
        // Two big arrays fit in the pool (with room to spare); with the small one they do not.
        let big = SearchQueryBuffers.maximumBytes / 16 - SearchQueryBuffers.minimumCount / 4
        let small = [Double](repeating: 0, count: SearchQueryBuffers.minimumCount)
        let smallAddress = small.withUnsafeBufferPointer { $0.baseAddress }
        buffers.give(small)
        buffers.give([Double](repeating: 1, count: big))
        buffers.give([Double](repeating: 2, count: big))
        // Three arrays exceed the bytes: the small one went.
        let reused = buffers.reals(capacity: SearchQueryBuffers.minimumCount)
        #expect(reused.withUnsafeBufferPointer { $0.baseAddress } != smallAddress)
        #expect(reused.capacity >= big)
        #expect(buffers.reals(capacity: big).capacity >= big)
        #expect(buffers.keptBytes == 0)
    }
}
