import Foundation
import QuireCodec
import Testing

/// `CompactValue.appendJSON(from:fields:)`, the dump's writer straight from record bytes, writes
/// exactly what decoding to a tree and `jsonBytes()` writes.
@Suite struct JSONWriterTests {
    private struct Record: Codable {
        var id: String
        var text: String
        var short: String?
        var count: Int
        var ratio: Double
        var flag: Bool
        var when: Date
        var tags: [String]
        var nested: [[String: Int]]
        var blob: Data
    }

    @Test func writesWhatTheValueTreeWrites() throws {
        var random = SplitMix64(seed: 19)
        let pieces = ["a", "é", "東京", "\"q\"", "back\\slash", "line\nbreak", "tab\t", "\u{1}", "🎉", String(repeating: "long ", count: 40)]
        var table = FieldTable()
        let encoder = CompactEncoder()
        for index in 0..<200 {
            func text(_ n: Int) -> String { (0..<n).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined() }
            let record = Record(
                id: "id-\(index)", text: text(Int(random.next() % 12)), short: index % 3 == 0 ? nil : text(2),
                count: Int(Int64(bitPattern: random.next()) >> 8), ratio: Double(random.next() % 10_000) / 7,
                flag: index % 2 == 0, when: Date(timeIntervalSince1970: Double(random.next() % 2_000_000_000) / 10),
                tags: (0..<Int(random.next() % 4)).map { _ in text(1) }, nested: [["k\(index)": index]],
                blob: Data([UInt8(index & 0xFF), 0, 255]))
            let bytes = try encoder.encode(record, fields: &table)
            var direct: [UInt8] = []
            try bytes.withUnsafeBytes { try CompactValue.appendJSON(from: $0, fields: table, to: &direct) }
            let viaTree = try CompactValue.decode(from: bytes, fields: table).jsonBytes()
            #expect(direct == viaTree, "record \(index): \(String(decoding: direct, as: UTF8.self))")
            // And it is JSON that reads back as the record's text (escapes included).
            let object = try #require(try JSONSerialization.jsonObject(with: Data(direct)) as? [String: Any])
            #expect(object["text"] as? String == record.text, "record \(index)")
            #expect(object["tags"] as? [String] == record.tags, "record \(index)")
        }
    }

    @Test func invalidUTF8AndTruncationAreErrorsAndWriteNothing() throws {
        var table = FieldTable()
        var bytes = try CompactEncoder().encode(["text": "abcdef"], fields: &table)
        var out: [UInt8] = Array("kept".utf8)
        let at = try #require(bytes.firstIndex(of: UInt8(ascii: "c")))
        bytes[at] = 0xFF
        #expect(throws: CompactDecodingError.self) {
            try bytes.withUnsafeBytes { try CompactValue.appendJSON(from: $0, fields: table, to: &out) }
        }
        #expect(out == Array("kept".utf8))
        let cut = Array(bytes.dropLast(2))
        #expect(throws: CompactDecodingError.self) {
            try cut.withUnsafeBytes { try CompactValue.appendJSON(from: $0, fields: table, to: &out) }
        }
        #expect(out == Array("kept".utf8))
    }
}
