// libFuzzer harness: the QuireCodec decoder on arbitrary bytes.
// Built by scripts/fuzz.sh (not a SwiftPM target). Every input must decode or throw; a trap,
// an ASan report, a timeout or an out-of-memory is a finding.
import Foundation
import QuireCodec

/// A record shaped like an article: optionals, nesting, dates, URLs, maps, bytes.
struct FuzzRecord: Codable, Hashable {
    struct Keyword: Codable, Hashable {
        var name: String
        var value: String
        var rank: Int?
    }
    var id: String
    var url: URL?
    var headline: String?
    var publishedAt: Date?
    var wordCount: Int?
    var score: Double
    var flagged: Bool
    var keywords: [Keyword]
    var counts: [String: Int]
    var byIndex: [Int: [Bool]]
    var thumbnail: Data?
    var tags: Set<String>
}

/// The field table every input is decoded against, as a store would hold it.
nonisolated(unsafe) var fuzzFields = FieldTable()
let limits = CompactDecoder.Options(depthLimit: 64, maxDecompressedSize: 1 << 20)

func seedRecords() -> [FuzzRecord] {
    (0..<6).map { (i: Int) -> FuzzRecord in
        let keywords: [FuzzRecord.Keyword] = (0..<i).map { (k: Int) -> FuzzRecord.Keyword in
            FuzzRecord.Keyword(name: "subject", value: "k\(k)", rank: k % 2 == 0 ? k : nil)
        }
        let headline: String? = i == 3 ? nil : String(repeating: "Mars rover “finds” 😀 中文 ", count: i * 8)
        let date = Date(timeIntervalSince1970: 1_325_376_000 + Double(i) * 86_400)
        let url: URL? = i % 2 == 0 ? URL(string: "https://example.com/\(i)?q=1") : nil
        let thumbnail: Data? = i == 4 ? Data(repeating: 7, count: 300) : nil
        let tags: Set<String> = Set((0..<i).map { (t: Int) -> String in "t\(t)" })
        return FuzzRecord(
            id: "nyt://article/\(i)", url: url, headline: headline, publishedAt: date,
            wordCount: i == 1 ? nil : i * 100, score: Double(i) / 3, flagged: i % 2 == 1, keywords: keywords,
            counts: ["a": i, "b": -i], byIndex: [i: [true, false]], thumbnail: thumbnail, tags: tags)
    }
}

/// Writes valid encodings (plain, compressed, standalone) into `$QUIRE_FUZZ_SEED_DIR`.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    var fields = FieldTable()
    let plain = CompactEncoder()
    let compressed = CompactEncoder(options: .init(compression: .init(threshold: 32)))
    var seeds: [[UInt8]] = []
    for record in seedRecords() {
        if let bytes = try? plain.encode(record, fields: &fields) { seeds.append(bytes) }
        if let bytes = try? compressed.encode(record, fields: &fields) { seeds.append(bytes) }
        if let bytes = try? plain.encodeStandalone(record) { seeds.append(bytes) }
    }
    fuzzFields = fields
    if let dir = ProcessInfo.processInfo.environment["QUIRE_FUZZ_SEED_DIR"] {
        for (i, seed) in seeds.enumerated() {
            _ = FileManager.default.createFile(atPath: "\(dir)/seed-codec-\(i)", contents: Data(seed))
        }
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let raw = UnsafeRawBufferPointer(start: data, count: size)
    let decoder = CompactDecoder(options: limits)
    if let record = try? decoder.decode(FuzzRecord.self, from: raw, fields: fuzzFields) {
        // Whatever decodes must encode and decode back to an equal value (NaN never equals itself).
        var fields = fuzzFields
        if let again = try? CompactEncoder().encode(record, fields: &fields) {
            let back = try? decoder.decode(FuzzRecord.self, from: again, fields: fields)
            precondition(back != nil, "a re-encoded record does not decode")
            let hasNaN = record.score.isNaN || record.publishedAt?.timeIntervalSinceReferenceDate.isNaN == true
            precondition(back == record || hasNaN, "a decoded record does not round-trip")
        }
    }
    _ = try? decoder.decodeStandalone(FuzzRecord.self, from: raw)
    if let value = try? CompactValue.decode(from: raw, fields: fuzzFields, options: limits) {
        _ = value.jsonBytes()
    }
    for path in ["keywords.1.value", "counts.a", "byIndex.3.0", "", "headline"] {
        _ = try? CompactField.value(at: path, in: raw, fields: fuzzFields, options: limits)
    }
    return 0
}
