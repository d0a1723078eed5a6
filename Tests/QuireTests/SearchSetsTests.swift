import Testing
@testable import Quire

@Suite struct SearchSetsTests {
    /// The gallop that scores a leaf against the kept matches finds what a linear scan finds,
    /// from any start, for targets before, inside, between and past the numbers.
    @Test func gallopingFindsTheFirstNumberAtOrAfterTheTarget() {
        var generator = SystemRandomNumberGenerator()
        for size in [0, 1, 2, 3, 7, 64, 1000] {
            var numbers: [UInt32] = []
            var next = UInt32.random(in: 0..<5, using: &generator)
            for _ in 0..<size {
                numbers.append(next)
                next += UInt32.random(in: 1...(size > 100 ? 40 : 3), using: &generator)
            }
            numbers.withUnsafeBufferPointer { buffer in
                for _ in 0..<300 {
                    let start = Int.random(in: 0...size, using: &generator)
                    let target = UInt32.random(in: 0...(next + 2), using: &generator)
                    let want = numbers.indices.first { $0 >= start && numbers[$0] >= target } ?? size
                    #expect(SearchSets.firstIndex(atLeast: target, in: buffer, from: start) == want, "size \(size) start \(start) target \(target)")
                }
            }
        }
    }
}
