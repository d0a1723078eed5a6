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
        let pieces = [
            "a", "é", "東京", "\"q\"", "back\\slash", "line\nbreak", "tab\t", "\u{1}", "🎉", String(repeating: "long ", count: 40),
            "\u{7F}", "\u{9B}2J", "\u{202E}evil", "\u{2028}", "’quoted’ — dash", "\u{2066}x\u{2069}",
        ]
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

    /// DEL, C1 controls, bidi marks, overrides and isolates and U+2028/U+2029 are written as
    /// `\uXXXX` (a raw U+009B is a CSI to a terminal reading C1 in UTF-8); characters beside
    /// them in their UTF-8 blocks (curly quotes, dashes, NBSP) stay as they are, and the JSON
    /// reads back as the exact text.
    @Test func charactersThatSteerATerminalAreEscaped() throws {
        let steering: [Unicode.Scalar] = [
            "\u{7F}", "\u{80}", "\u{85}", "\u{9B}", "\u{9F}", "\u{61C}", "\u{200E}", "\u{200F}", "\u{2028}",
            "\u{2029}", "\u{202A}", "\u{202E}", "\u{2066}", "\u{2069}",
        ]
        let kept: [Unicode.Scalar] = ["\u{A0}", "\u{A9}", "\u{61B}", "\u{200B}", "\u{200D}", "\u{2019}", "\u{2014}", "\u{2027}", "\u{202F}", "\u{2065}", "\u{206A}"]
        for scalar in steering + kept {
            for text in [String(scalar), "ab\(scalar)cdefghijkl", "abcdefgh\(scalar)"] {
                let json = CompactValue.string(text).jsonString()
                let escape = "\\u" + String(format: "%04x", scalar.value)
                if steering.contains(scalar) {
                    #expect(json.contains(escape) && !json.unicodeScalars.contains(scalar), "\(json)")
                } else {
                    #expect(json.unicodeScalars.contains(scalar), "\(json)")
                }
                let back = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed) as? String
                #expect(back.map { Array($0.unicodeScalars) } == Array(text.unicodeScalars), "\(json)")
            }
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

    /// One writer for many records (what a dump's part does): the keys it keeps for the table's
    /// ids must not leak into a standalone payload, whose ids name its own fields, and a record
    /// that fails leaves nothing behind it.
    @Test func aReusedWriterWritesEachRecordAsTheTreeDoes() throws {
        struct Other: Codable { var zeta: String; var alpha: [Int]; var title: String }
        var table = FieldTable()
        let encoder = CompactEncoder()
        var payloads: [[UInt8]] = []
        for index in 0..<60 {
            if index % 3 == 2 {
                payloads.append(try encoder.encodeStandalone(Other(zeta: "z\(index)", alpha: [index, -index], title: "t\"\(index)")))
            } else {
                payloads.append(try encoder.encode(["title": "record \(index)", "count": "\(index * 31)", "tab": "a\tb"], fields: &table))
            }
        }
        // Every byte escaped (six bytes each) in a string far past the buffer's room.
        payloads.append(try encoder.encode(["title": String(repeating: "\u{1}\"", count: 3_000)], fields: &table))
        var broken = payloads[4]
        broken[broken.count - 3] = 0xFF  // inside the last string: not UTF-8
        payloads.insert(broken, at: 5)
        var writer = RecordJSONWriter(fields: table, capacity: 16)
        var expected: [UInt8] = []
        for (index, payload) in payloads.enumerated() {
            let before = writer.count
            do {
                try payload.withUnsafeBytes { try writer.append(record: $0) }
            } catch {
                #expect(index == 5, "record \(index) failed: \(error)")
                #expect(writer.count == before)
                continue
            }
            expected += try CompactValue.decode(from: payload, fields: table).jsonBytes()
            #expect(Array(writer.bytes) == expected, "record \(index)")
        }
        #expect(expected.count > 16 * 64)  // the buffer grew many times over
    }
}
