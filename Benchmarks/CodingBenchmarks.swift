import Foundation
import QuireCodec
import QuireNews

/// The formats compared per record; `json` is each group's baseline.
enum EncodingFormat: String, CaseIterable {
    case json, plist, hand, quire
    /// Quire's format compressed with zstd and a dictionary trained on the corpus.
    case quireZstd = "quire.zstd"
    /// Quire's format with record checksums (version 2, as the store writes), each checked on
    /// decode (as `verify` and the CLI do; embedders' reads skip the check by default).
    case quireChecked = "quire.checked"
}

/// The per-format codec calls, made once per case so the timed loops only encode or decode.
private struct Codecs {
    let format: EncodingFormat
    let json = JSONEncoder()
    let plist: PropertyListEncoder = {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        return encoder
    }()
    let jsonDecoder = JSONDecoder()
    let plistDecoder = PropertyListDecoder()
    let compact: CompactEncoder
    let compactDecoder: CompactDecoder
    let fields: FieldTable

    init(format: EncodingFormat, corpus: Corpus) throws {
        self.format = format
        fields = corpus.fields
        if format == .quireZstd {
            let dictionary = try corpus.zstdDictionary()
            compact = CompactEncoder(options: .init(compression: .init(dictionary: dictionary)))
            compactDecoder = CompactDecoder(options: .init(dictionary: dictionary))
        } else if format == .quireChecked {
            compact = CompactEncoder(options: .init(checksum: true))
            compactDecoder = CompactDecoder(options: .init(verifyChecksums: true))
        } else {
            compact = CompactEncoder()
            compactDecoder = CompactDecoder()
        }
    }

    /// Encodes with a warm field table (every name already known, as in a store).
    /// `inout` only so that the article is passed by address: passed by value from the corpus's
    /// memory it is copied first (retaining all its strings), a cost of the loop, not of a coder.
    func encode(_ article: inout Article, table: inout FieldTable, buffer: inout [UInt8]) throws -> Int {
        switch format {
        case .json: return try json.encode(article).count
        case .plist: return try plist.encode(article).count
        case .hand:
            buffer.removeAll(keepingCapacity: true)
            HandCodec.encode(article, into: &buffer)
            return buffer.count
        case .quire, .quireZstd, .quireChecked: return try compact.encode(article, fields: &table).count
        }
    }

    func encoded(_ article: Article) throws -> [UInt8] {
        switch format {
        case .json: return Array(try json.encode(article))
        case .plist: return Array(try plist.encode(article))
        case .hand: return HandCodec.encode(article)
        case .quire, .quireZstd, .quireChecked:
            var table = fields
            return try compact.encode(article, fields: &table)
        }
    }

    func decode(_ bytes: [UInt8]) throws -> Article {
        switch format {
        case .json: return try jsonDecoder.decode(Article.self, from: Data(bytes))
        case .plist: return try plistDecoder.decode(Article.self, from: Data(bytes))
        case .hand: return try bytes.withUnsafeBytes { try HandCodec.decode($0) }
        case .quire, .quireZstd, .quireChecked: return try compactDecoder.decode(Article.self, from: bytes, fields: fields)
        }
    }
}

/// `encode.<format>`: encode every article of the corpus.
/// The consumed result is the total byte count; bytes per record is its mean.
final class EncodeBenchmark: Benchmark {
    let format: EncodingFormat
    private let corpus: Corpus
    private var codecs: Codecs?
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

    func setUp() throws {
        meanBytes = nil
        codecs = try Codecs(format: format, corpus: corpus)
    }

    func run() throws -> Int {
        guard let codecs else { throw BenchError("not set up") }
        var table = corpus.fields
        var buffer: [UInt8] = []
        buffer.reserveCapacity(2048)
        var total = 0
        // By address: `for article in articles` would copy each article (retaining all its
        // strings), a cost of the loop rather than of any encoder. Nothing writes through it.
        try corpus.articles.withUnsafeBufferPointer { articles in
            let articles = UnsafeMutableBufferPointer(mutating: articles)
            for index in articles.indices { total += try codecs.encode(&articles[index], table: &table, buffer: &buffer) }
        }
        meanBytes = Double(total) / Double(max(1, corpus.count))
        return total
    }
}

/// `decode.<format>`: decode every pre-encoded article. The consumed result sums the word
/// counts; `setUp` checks that decoding gives back the original articles.
final class DecodeBenchmark: Benchmark {
    let format: EncodingFormat
    private let corpus: Corpus
    private var codecs: Codecs?
    private var encoded: [[UInt8]] = []
    /// The same bytes as `Data` for the Foundation decoders, so the timed loop copies nothing.
    private var encodedData: [Data] = []

    init(corpus: Corpus, format: EncodingFormat) {
        self.corpus = corpus
        self.format = format
    }

    var name: String { "decode.\(format.rawValue)" }
    var group: String { "decode" }
    var isBaseline: Bool { format == .json }
    var records: Int { corpus.count }
    var bytesPerRecord: Double? { encoded.isEmpty ? nil : Corpus.mean(encoded) }

    func setUp() throws {
        let codecs = try Codecs(format: format, corpus: corpus)
        self.codecs = codecs
        switch format {
        case .hand: encoded = corpus.handValues
        // Copied in index order: `corpus.values` were encoded in key order, so read in index order
        // each record would sit at a random address (a cache miss no other format's loop pays).
        case .quire: encoded = corpus.values.map { $0.withUnsafeBufferPointer { Array($0) } }
        default: encoded = try corpus.articles.map { try codecs.encoded($0) }
        }
        if format == .json || format == .plist { encodedData = encoded.map { Data($0) } }
        for index in encoded.indices.prefix(100) where try codecs.decode(encoded[index]) != corpus.articles[index] {
            throw BenchError("\(name): article \(index) decodes to something else than the original")
        }
    }

    func run() throws -> Int {
        guard let codecs else { throw BenchError("not set up") }
        var total = 0
        switch format {
        case .json:
            for data in encodedData { total &+= try codecs.jsonDecoder.decode(Article.self, from: data).wordCount ?? 1 }
        case .plist:
            for data in encodedData { total &+= try codecs.plistDecoder.decode(Article.self, from: data).wordCount ?? 1 }
        default:
            for bytes in encoded { total &+= try codecs.decode(bytes).wordCount ?? 1 }
        }
        return total
    }
}
