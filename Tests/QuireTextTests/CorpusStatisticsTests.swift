import Testing
import QuireFixtures
import QuireNews
import QuireText

/// Token statistics of generated articles' text fields, as QuireText tokenizes them.
struct CorpusStatistics {
    var tokens = 0
    var counts: [String: Int] = [:]
    var documentFrequency: [String: Int] = [:]
    var articles = 0

    init(articles: [Article]) {
        var tokenizer = Tokenizer(options: TokenizerOptions(joinHyphenated: false))
        var buffer = TokenBuffer()
        for article in articles {
            buffer.removeAll()
            for text in [article.headline, article.abstract, article.snippet, article.leadParagraph, article.byline] {
                if let text { tokenizer.tokenize(text, into: &buffer) }
            }
            var seen = Set<String>()
            for token in buffer.tokens {
                let term = buffer.term(of: token)
                counts[term, default: 0] += 1
                if seen.insert(term).inserted { documentFrequency[term, default: 0] += 1 }
            }
            tokens += buffer.count
        }
        self.articles = articles.count
    }

    /// The least-squares slope of log(frequency) against log(rank) over ranks `ranks` (1-based).
    func zipfSlope(ranks: ClosedRange<Int>) -> Double {
        let sorted = counts.values.sorted(by: >)
        let points = ranks.filter { $0 <= sorted.count }.map { (ln(Double($0)), ln(Double(sorted[$0 - 1]))) }
        let n = Double(points.count)
        let mx = points.map(\.0).reduce(0, +) / n
        let my = points.map(\.1).reduce(0, +) / n
        let sxy = points.map { ($0.0 - mx) * ($0.1 - my) }.reduce(0, +)
        let sxx = points.map { ($0.0 - mx) * ($0.0 - mx) }.reduce(0, +)
        return sxy / sxx
    }
}

/// Natural logarithm by bisection on exp's series (tests do not import Foundation).
func ln(_ x: Double) -> Double {
    var k = 0.0
    var m = x
    while m > 2 { m /= 2; k += 1 }
    while m < 1 { m *= 2; k -= 1 }
    // atanh series for m in [1, 2].
    let s = (m - 1) / (m + 1)
    var term = s
    var sum = 0.0
    var i = 1.0
    for _ in 0..<60 {
        sum += term / i
        term *= s * s
        i += 2
    }
    return 2 * sum + k * 0.6931471805599453
}

@Suite struct CorpusStatisticsTests {
    @Test func vocabularyIsLargeDistinctAndTheSameForEverySeed() {
        let words = ArticleGenerator.vocabulary
        #expect(words.count == 60_000)
        #expect(Set(words).count == words.count)
        #expect(words.prefix(3) == ["the", "of", "to"])
        #expect(words.contains { $0.unicodeScalars.contains { $0.value > 0x7F } })
    }

    @Test func generatedTextFollowsZipfsLaw() {
        var generator = ArticleGenerator(seed: 7)
        let stats = CorpusStatistics(articles: generator.articles(count: 2_000))
        // The old generator: 54 distinct words in 185k tokens. Now (seed 7) 29,707 in 194,389 text
        // tokens (headline, abstract, snippet, lead, byline); 59,604 distinct in 20,000 articles.
        #expect(stats.tokens > 150_000)
        #expect(stats.counts.count > 25_000)
        // log-frequency falls about linearly with log-rank, slope near −1 (natural text: −0.9…−1.1).
        let slope = stats.zipfSlope(ranks: 10...5_000)
        #expect(slope < -0.8 && slope > -1.2, "slope \(slope)")
        // The most common word ("the") is in nearly every article; a mid-rank word in few.
        let common = stats.documentFrequency["the"] ?? 0
        #expect(common > 1_700)
        let rare = stats.counts.filter { $0.value == 1 }.count
        #expect(rare > 5_000)  // hapax legomena: the long tail
        #expect(stats.documentFrequency.values.filter { $0 * 10 >= stats.articles }.count < 200)
    }

    @Test func generationIsDeterministic() {
        var a = ArticleGenerator(seed: 99)
        var b = ArticleGenerator(seed: 99)
        #expect(a.article(index: 1234) == b.article(index: 1234))
        #expect(a.article(index: 5).abstract != a.article(index: 6).abstract)
    }
}
