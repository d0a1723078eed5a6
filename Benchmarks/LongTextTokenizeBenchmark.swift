import QuireFixtures
import QuireNews
import QuireText

/// `tokenize.long_text.latin` / `.cjk`: one document of about a million characters, news words
/// or a run of ideographs drawn with news-like (Zipf) frequencies, tokenized as the full-text index
/// does. Records/s counts characters, so a cost that grows faster than the text shows as the CJK
/// rate collapsing against the Latin one (each bigram once copied the whole token buffer: 40 s for
/// 200,000 ideographs).
final class LongTextTokenizeBenchmark: Benchmark {
    enum Script: String { case latin, cjk }

    private let script: Script
    private let characters: Int
    private let corpus: Corpus
    private var text = ""

    init(corpus: Corpus, script: Script, characters: Int = 1_000_000) {
        self.corpus = corpus
        self.script = script
        self.characters = characters
    }

    var name: String { "tokenize.long_text.\(script.rawValue)" }
    var group: String { "tokenize.long_text" }
    var isBaseline: Bool { script == .latin }
    var records: Int { characters }
    var bytesPerRecord: Double? { nil }
    var note: String? { "one document of \(characters) characters; records/s counts characters" }

    func setUp() throws {
        switch script {
        case .latin:
            // The corpus's own news text, headlines and abstracts, until long enough.
            var pieces: [String] = []
            var count = 0
            for article in corpus.articles where count < characters {
                for piece in [article.headline ?? "", article.abstract ?? ""] {
                    pieces.append(piece)
                    count += piece.count + 1
                }
            }
            text = String(pieces.joined(separator: " ").prefix(characters))
        case .cjk:
            // 5,000 ideographs drawn with the law of the corpus's words (as characters of news
            // text are), with a full stop now and then.
            var random = SplitMix64(seed: 19)
            let ranks = ZipfTable(count: 5_000, shift: 2.7)
            var scalars = String.UnicodeScalarView()
            for i in 0..<characters {
                scalars.append(i % 40 == 39 ? "。" : Unicode.Scalar(0x4E00 + UInt32(ranks.rank(&random)))!)
            }
            text = String(scalars)
        }
    }

    func run() throws -> Int {
        var tokenizer = Tokenizer()
        var buffer = TokenBuffer()
        tokenizer.tokenize(text, into: &buffer)
        return buffer.tokens.count
    }
}
