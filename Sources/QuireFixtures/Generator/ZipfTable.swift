/// Ranks drawn with a Zipf–Mandelbrot law, p(r) ∝ 1 / (r + shift): the frequencies of the words
/// (or characters) of natural text, a few very common and most rare.
public struct ZipfTable: Sendable {
    /// `cumulative[r]` is the probability of ranks `0...r`, scaled to `UInt64` (the last is `UInt64.max`).
    private let cumulative: [UInt64]

    /// A table of `count` ranks (at least one).
    public init(count: Int, shift: Double) {
        let count = max(1, count)
        var weights = [Double](repeating: 0, count: count)
        var total = 0.0
        for rank in 0..<count {
            weights[rank] = 1 / (Double(rank) + shift)
            total += weights[rank]
        }
        var cumulative = [UInt64](repeating: 0, count: count)
        var running = 0.0
        for rank in 0..<count {
            running += weights[rank]
            cumulative[rank] = running >= total ? UInt64.max : UInt64(running / total * 18_446_744_073_709_549_568.0)
        }
        cumulative[count - 1] = UInt64.max
        self.cumulative = cumulative
    }

    /// A rank in `0..<count`, drawn from the law (binary search over the cumulative table).
    @inline(__always)
    public func rank(_ rng: inout SplitMix64) -> Int {
        let u = rng.next()
        var low = 0
        var high = cumulative.count - 1
        while low < high {
            let mid = (low + high) >> 1
            if cumulative[mid] < u { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
