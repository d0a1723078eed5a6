import Testing
import QuireText

private func close(_ a: Double, _ b: Double, _ tolerance: Double = 1e-9) -> Bool { abs(a - b) <= tolerance * max(1, abs(b)) }

@Suite struct BM25Tests {
    @Test func idfMatchesTheFormula() {
        // ln(1 + (N − n + 0.5)/(n + 0.5)), values worked out by hand: N = 4, n = 1 → ln(1 + 3.5/1.5) = ln(10/3).
        #expect(close(BM25.idf(documentCount: 4, documentFrequency: 1), 1.2039728043259361))
        #expect(close(BM25.idf(documentCount: 4, documentFrequency: 4), 0.10536051565782635))  // ln(1 + 0.5/4.5) = ln(10/9)
        #expect(close(BM25.idf(documentCount: 1_000_000, documentFrequency: 10), 11.464136300800297))  // ln(1 + 999990.5/10.5)
        #expect(BM25.idf(documentCount: 4, documentFrequency: 2) > BM25.idf(documentCount: 4, documentFrequency: 3))
    }

    @Test func singleFieldIsClassicBM25OnASmallCorpus() {
        // Corpus (one field): d0 "storm surge storm" (3 tokens), d1 "storm" (1), d2 "calm sea today" (3).
        // avgdl = 7/3; query "storm": N = 3, n = 2, idf = ln(1 + 1.5/2.5) = ln 1.6 = 0.47000362924573563.
        // d0: tf 2, K = 1.2·(0.25 + 0.75·3/(7/3)) = 1.2·1.2142857142857142 = 1.457142857142857
        //     score = idf · 2·2.2/(2 + 1.457142857) = 0.47000363 · 1.2727272727 = 0.5981864372218454
        // d1: tf 1, K = 1.2·(0.25 + 0.75·1/(7/3)) = 1.2·0.5714285714 = 0.6857142857
        //     score = idf · 2.2/1.6857142857 = 0.47000363 · 1.3050847457627119 = 0.61339457
        let scorer = BM25(weights: [1])
        let idf = BM25.idf(documentCount: 3, documentFrequency: 2)
        #expect(close(idf, 0.47000362924573563))
        let d0 = scorer.termScore(idf: idf, frequencies: [2], lengths: [3], averageLengths: [7.0 / 3])
        let d1 = scorer.termScore(idf: idf, frequencies: [1], lengths: [1], averageLengths: [7.0 / 3])
        #expect(close(d0, 0.47000362924573563 * 4.4 / (2 + 1.2 * (0.25 + 0.75 * 9.0 / 7))))
        #expect(close(d0, 0.5981864372218454, 1e-12))
        #expect(close(d1, 0.61339457, 1e-7))
        // The short document wins despite the lower frequency: length normalization at work.
        #expect(d1 > d0)
        #expect(scorer.termScore(idf: idf, frequencies: [0], lengths: [3], averageLengths: [7.0 / 3]) == 0)
    }

    @Test func fieldWeightsCombineBeforeSaturation() {
        // Two fields, headline weight 3, body weight 1, b = 0.75, k1 = 1.2.
        // Document: headline 4 tokens (avg 5) with tf 1, body 20 tokens (avg 40) with tf 2.
        // tf̃ = 3·1/(0.25 + 0.75·0.8) + 1·2/(0.25 + 0.75·0.5) = 3/0.85 + 2/0.625 = 3.5294117647 + 3.2 = 6.7294117647
        // score(idf 2) = 2 · 6.7294117647·2.2/(6.7294117647 + 1.2) = 2 · 1.8670623145 = 3.7341246
        let scorer = BM25(k1: 1.2, b: 0.75, weights: [3, 1])
        let tf = [UInt32(1), 2].withUnsafeBufferPointer { f in
            [UInt32(4), 20].withUnsafeBufferPointer { l in
                [5.0, 40].withUnsafeBufferPointer { a in scorer.weightedFrequency(frequencies: f, lengths: l, averageLengths: a) }
            }
        }
        #expect(close(tf, 3 / 0.85 + 3.2))
        let score = scorer.termScore(idf: 2, frequencies: [1, 2], lengths: [4, 20], averageLengths: [5, 40])
        #expect(close(score, 2 * tf * 2.2 / (tf + 1.2)))
        #expect(close(score, 3.7341246, 1e-6))
        // A match only in the heavier field outranks the same match only in the lighter one.
        let inHeadline = scorer.termScore(idf: 1, frequencies: [1, 0], lengths: [5, 40], averageLengths: [5, 40])
        let inBody = scorer.termScore(idf: 1, frequencies: [0, 1], lengths: [5, 40], averageLengths: [5, 40])
        #expect(inHeadline > inBody)
        // Saturation: never more than idf·(k1 + 1).
        #expect(scorer.termScore(idf: 1, frequencies: [10_000, 10_000], lengths: [5, 40], averageLengths: [5, 40]) < 2.2)
    }

    @Test func schemaWeightsAreIndexedById() {
        let weights = TextSchema.articles.weights
        #expect(weights.count == 6)
        #expect(weights[0] == 3 && weights[4] == 2 && weights[5] == 0.5)
        #expect(BM25(schema: .articles).weights == weights)
    }
}
