import Foundation

/// The encoders compared per record; `encode.json` is the group's baseline.
enum EncodingFormat: String, CaseIterable {
    case json, plist, hand
}

/// `encode.json` / `encode.plist` / `encode.hand`: encode every article of the corpus.
/// The consumed result is the total byte count; bytes per record is its mean.
final class EncodeBenchmark: Benchmark {
    let format: EncodingFormat
    private let corpus: Corpus
    private var meanBytes: Double?

    init(corpus: Corpus, format: EncodingFormat) {
        self.corpus = corpus
        self.format = format
    }

    var name: String { "encode.\(format.rawValue)" }
    var group: String { "encode" }
    var isBaseline: Bool { format == .json }
    var records: Int { corpus.count }
    var bytesPerRecord: Double? { meanBytes }

    func setUp() throws { meanBytes = nil }

    func run() throws -> Int {
        var total = 0
        switch format {
        case .json:
            let encoder = JSONEncoder()
            for article in corpus.articles { total += try encoder.encode(article).count }
        case .plist:
            let encoder = PropertyListEncoder()
            encoder.outputFormat = .binary
            for article in corpus.articles { total += try encoder.encode(article).count }
        case .hand:
            var buffer: [UInt8] = []
            buffer.reserveCapacity(2048)
            for article in corpus.articles {
                buffer.removeAll(keepingCapacity: true)
                HandCodec.encode(article, into: &buffer)
                total += buffer.count
            }
        }
        meanBytes = Double(total) / Double(max(1, corpus.count))
        return total
    }
}

/// `decode.json` / `decode.hand`: decode every pre-encoded article. The consumed result sums
/// each article's word count; the first sample also checks a decoded article equals the original.
final class DecodeBenchmark: Benchmark {
    let format: EncodingFormat
    private let corpus: Corpus
    private var encoded: [Data] = []

    init(corpus: Corpus, format: EncodingFormat) {
        self.corpus = corpus
        self.format = format
    }

    var name: String { "decode.\(format.rawValue)" }
    var group: String { "decode" }
    var isBaseline: Bool { format == .json }
    var records: Int { corpus.count }
    var bytesPerRecord: Double? {
        encoded.isEmpty ? nil : Double(encoded.reduce(0) { $0 + $1.count }) / Double(encoded.count)
    }

    func setUp() throws {
        switch format {
        case .json:
            let encoder = JSONEncoder()
            encoded = try corpus.articles.map { try encoder.encode($0) }
        case .plist:
            let encoder = PropertyListEncoder()
            encoder.outputFormat = .binary
            encoded = try corpus.articles.map { try encoder.encode($0) }
        case .hand:
            encoded = corpus.values.map { Data($0) }
        }
        // Dates go through Double in JSON and milliseconds in the hand format, so compare the id and
        // the text, which must be exact.
        if let first = encoded.first, let original = corpus.articles.first {
            let decoded = try decode(first)
            guard decoded.id == original.id, decoded.leadParagraph == original.leadParagraph,
                decoded.keywords == original.keywords
            else { throw BenchError("\(name): the decoded article differs from the original") }
        }
    }

    func run() throws -> Int {
        var total = 0
        switch format {
        case .json:
            let decoder = JSONDecoder()
            for data in encoded { total &+= try decoder.decode(BenchArticle.self, from: data).wordCount }
        case .plist:
            let decoder = PropertyListDecoder()
            for data in encoded { total &+= try decoder.decode(BenchArticle.self, from: data).wordCount }
        case .hand:
            for data in encoded { total &+= try decode(data).wordCount }
        }
        return total
    }

    private func decode(_ data: Data) throws -> BenchArticle {
        switch format {
        case .json: return try JSONDecoder().decode(BenchArticle.self, from: data)
        case .plist: return try PropertyListDecoder().decode(BenchArticle.self, from: data)
        case .hand: return try data.withUnsafeBytes { try HandCodec.decode($0) }
        }
    }
}
