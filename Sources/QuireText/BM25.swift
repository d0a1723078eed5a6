/// BM25 ranking with field weights (BM25F), as pure functions over term statistics.
///
/// For a query term t and a document d with fields f:
/// ```
/// idf(t)  = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5))            N documents, n(t) containing t
/// tf̃(t,d) = Σ_f w_f · tf(t,d,f) / (1 − b + b · len(d,f) / avglen(f))
/// score   = Σ_t idf(t) · tf̃ · (k1 + 1) / (tf̃ + k1)
/// ```
/// With one field of weight 1 this is classic BM25 (Lucene's non-negative idf). A field whose
/// average length is 0 contributes `w_f · tf` unnormalized.
public struct BM25: Sendable, Hashable {
    /// Term frequency saturation (default 1.2).
    public var k1: Double
    /// Length normalization, 0 (none) to 1 (full) (default 0.75).
    public var b: Double
    /// The weight of each field id (index); ids past the end weigh 0.
    public var weights: [Double]

    /// A scorer; `weights` is indexed by field id.
    public init(k1: Double = 1.2, b: Double = 0.75, weights: [Double]) {
        self.k1 = k1
        self.b = b
        self.weights = weights
    }

    /// A scorer with the field weights of `schema`.
    public init(k1: Double = 1.2, b: Double = 0.75, schema: TextSchema) {
        self.init(k1: k1, b: b, weights: schema.weights)
    }

    /// The inverse document frequency of a term found in `documentFrequency` of `documentCount` documents.
    @inline(__always)
    public static func idf(documentCount: Int, documentFrequency: Int) -> Double {
        let n = Double(min(max(documentFrequency, 0), max(documentCount, 0)))
        let total = Double(max(documentCount, 0))
        return _log(1 + (total - n + 0.5) / (n + 0.5))
    }

    /// The weighted, length-normalized frequency tf̃ of one term in one document.
    ///
    /// `frequencies[f]`, `lengths[f]` and `averageLengths[f]` are the term's count, the document's
    /// token count and the corpus' mean token count of field id `f`; the three have the same count.
    @inline(__always)
    public func weightedFrequency(
        frequencies: UnsafeBufferPointer<UInt32>, lengths: UnsafeBufferPointer<UInt32>,
        averageLengths: UnsafeBufferPointer<Double>
    ) -> Double {
        var sum = 0.0
        let count = min(frequencies.count, lengths.count, averageLengths.count, weights.count)
        for f in 0..<count where frequencies[f] != 0 {
            let average = averageLengths[f]
            let norm = average > 0 ? 1 - b + b * Double(lengths[f]) / average : 1
            sum += weights[f] * Double(frequencies[f]) / norm
        }
        return sum
    }

    /// One term's contribution given its idf and tf̃.
    @inline(__always)
    public func termScore(idf: Double, weightedFrequency tf: Double) -> Double {
        tf <= 0 ? 0 : idf * tf * (k1 + 1) / (tf + k1)
    }

    /// One term's contribution to one document's score (array convenience of the two functions above).
    public func termScore(
        idf: Double, frequencies: [UInt32], lengths: [UInt32], averageLengths: [Double]
    ) -> Double {
        frequencies.withUnsafeBufferPointer { f in
            lengths.withUnsafeBufferPointer { l in
                averageLengths.withUnsafeBufferPointer { a in
                    termScore(idf: idf, weightedFrequency: weightedFrequency(frequencies: f, lengths: l, averageLengths: a))
                }
            }
        }
    }
}

/// Natural logarithm without Foundation (the module depends on nothing but the standard library).
@inline(__always)
func _log(_ x: Double) -> Double {
    // ln x = 2·atanh((x−1)/(x+1)) after scaling x into [1/√2, √2) by powers of two.
    guard x > 0, x.isFinite else { return x == 0 ? -.infinity : x.isNaN || x < 0 ? .nan : x }
    var exponent = x.exponent
    var m = x.significand  // in [1, 2)
    if m > 1.4142135623730951 {
        m /= 2
        exponent += 1
    }
    let s = (m - 1) / (m + 1)
    let s2 = s * s
    var term = s
    var sum = 0.0
    var k = 1.0
    while true {
        let next = sum + term / k
        if next == sum { break }
        sum = next
        term *= s2
        k += 2
    }
    return 2 * sum + Double(exponent) * 0.6931471805599453
}
