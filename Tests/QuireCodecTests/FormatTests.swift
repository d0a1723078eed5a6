import Foundation
import QuireCodec
import Testing

@Suite struct GoldenBytesTests {
    func bytes<T: Encodable>(_ value: T) throws -> [UInt8] {
        var fields = FieldTable()
        return try CompactEncoder().encode(value, fields: &fields)
    }

    @Test func primitives() throws {
        #expect(try bytes(true) == [0x01, 0x02])
        #expect(try bytes(false) == [0x01, 0x01])
        #expect(try bytes(Int?.none) == [0x01, 0x00])
        #expect(try bytes(-1) == [0x01, 0x41])  // small int: 0x40 | zigzag(-1)
        #expect(try bytes(31) == [0x01, 0x7E])
        #expect(try bytes(-32) == [0x01, 0x7F])
        #expect(try bytes(32) == [0x01, 0x03, 0x40])
        #expect(try bytes(150) == [0x01, 0x03, 0xAC, 0x02])
        #expect(try bytes(UInt8(200)) == [0x01, 0x04, 0xC8, 0x01])
        #expect(try bytes(1.0) == [0x01, 0x05, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F])
        #expect(try bytes(Float(1)) == [0x01, 0x06, 0, 0, 0x80, 0x3F])
        #expect(try bytes("hé") == [0x01, 0x83, 0x68, 0xC3, 0xA9])  // short string: 0x80 | length
        #expect(try bytes(String(repeating: "z", count: 127)).prefix(3) == [0x01, 0xFF, 0x7A])
        #expect(try bytes(String(repeating: "z", count: 128)).prefix(4) == [0x01, 0x07, 0x80, 0x01])
        #expect(try bytes(Data([9, 8])) == [0x01, 0x08, 0x02, 9, 8])
        #expect(try bytes(Date(timeIntervalSince1970: 1)) == [0x01, 0x0F, 0x02])  // whole seconds
        #expect(try bytes(Date(timeIntervalSince1970: -1)) == [0x01, 0x0F, 0x01])
        #expect(try bytes(Date(timeIntervalSince1970: 1.5)) == [0x01, 0x09, 0xB8, 0x17])  // milliseconds
        #expect(try bytes(Date(timeIntervalSinceReferenceDate: 0.000_1)).prefix(2) == [0x01, 0x0A])
        #expect(try bytes(URL(string: "a:b")!) == [0x01, 0x0B, 0x03, 0x61, 0x3A, 0x62])
        #expect(try bytes([1, 2]) == [0x01, 0x0C, 0x02, 0x42, 0x44])
        // Map keys keep the long forms; values may be short.
        #expect(try bytes(["b": 1, "a": 2]) == [0x01, 0x0E, 0x08, 0x07, 0x01, 0x61, 0x44, 0x07, 0x01, 0x62, 0x42])
        #expect(try bytes([2: true, 1: false]) == [0x01, 0x0E, 0x06, 0x03, 0x02, 0x01, 0x03, 0x04, 0x02])
    }

    @Test func objectAndStandalone() throws {
        struct Point: Codable { var x: Int; var y: Int }
        var fields = FieldTable(names: ["y"])
        let record = try CompactEncoder().encode(Point(x: 1, y: 2), fields: &fields)
        #expect(fields.names == ["y", "x"])
        #expect(record == [0x01, 0x0D, 0x04, 0x01, 0x42, 0x00, 0x44])
        let standalone = try CompactEncoder().encodeStandalone(Point(x: 1, y: 2))
        #expect(standalone == [0x21, 0x02, 0x01, 0x78, 0x01, 0x79, 0x0D, 0x04, 0x00, 0x42, 0x01, 0x44])
    }

    @Test func stringReferences() throws {
        // Strings of 4+ bytes are numbered in payload order; an equal later string is a reference.
        #expect(try bytes(["abcd", "xy", "abcd"]) == [0x01, 0x0C, 0x0A, 0x84, 0x61, 0x62, 0x63, 0x64, 0x82, 0x78, 0x79, 0x10, 0x00])
        // Short strings are never numbered: "xy" twice stays literal, and "abcd" is still string 0.
        #expect(try bytes(["xy", "xy"]) == [0x01, 0x0C, 0x06, 0x82, 0x78, 0x79, 0x82, 0x78, 0x79])
        // A shared prefix of 8+ bytes: (index 0, 9 shared bytes, suffix "Z").
        let prefixed = try bytes(["https://a", "https://aZ"])
        #expect(prefixed == [0x01, 0x0C, 0x0F, 0x89] + Array("https://a".utf8) + [0x11, 0x00, 0x09, 0x01, 0x5A])
        // The example in docs/FORMAT.md.
        #expect(try bytes(["https://a", "https://aZ", "https://a"])
            == [0x01, 0x0C, 0x11, 0x89] + Array("https://a".utf8) + [0x11, 0x00, 0x09, 0x01, 0x5A, 0x10, 0x00])
        var fields = FieldTable()
        #expect(try CompactDecoder().decode([String].self, from: prefixed, fields: fields) == ["https://a", "https://aZ"])
        #expect(try CompactValue.decode(from: prefixed, fields: fields) == .array([.string("https://a"), .string("https://aZ")]))
        _ = fields.intern("unused")
    }

    @Test func badReferencesThrow() {
        func fails(_ bytes: [UInt8]) -> Bool {
            (try? CompactDecoder().decode([String].self, from: bytes, fields: FieldTable())) == nil
                && (try? CompactValue.decode(from: bytes, fields: FieldTable())) == nil
        }
        // Valid reference as a control.
        #expect(!fails([0x01, 0x0C, 0x07, 0x84, 0x61, 0x62, 0x63, 0x64, 0x10, 0x00]))
        #expect(fails([0x01, 0x0C, 0x07, 0x84, 0x61, 0x62, 0x63, 0x64, 0x10, 0x01]))  // no string 1
        #expect(fails([0x01, 0x0C, 0x07, 0x10, 0x00, 0x84, 0x61, 0x62, 0x63, 0x64]))  // forward reference
        #expect(fails([0x01, 0x0C, 0x04, 0x83, 0x61, 0x62, 0x63, 0x10, 0x00]))  // too short to be numbered
        #expect(fails([0x01, 0x0C, 0x09, 0x84, 0x61, 0x62, 0x63, 0x64, 0x11, 0x00, 0x05, 0x00]))  // prefix too long
        #expect(fails([0x01, 0x0C, 0x0A, 0x84, 0x61, 0x62, 0x63, 0xC3, 0x11, 0x00, 0x03, 0x01, 0x28]))  // bad UTF-8
        #expect(fails([0x01, 0x0C, 0x02, 0x10, 0x00]))  // nothing to refer to
    }

    @Test func longContainerLengthWidens() throws {
        let text = String(repeating: "a", count: 200)
        let encoded = try bytes([text])
        // Array body = string tag + 2-byte length + 200 bytes = 203 = 0xCB 0x01 as a varint.
        #expect(Array(encoded.prefix(6)) == [0x01, 0x0C, 0xCB, 0x01, 0x07, 0xC8])
        var fields = FieldTable()
        #expect(try CompactDecoder().decode([String].self, from: encoded, fields: fields) == [text])
        _ = fields.intern("unused")
    }
}

@Suite struct SchemaEvolutionTests {
    struct V1: Codable { var title: String; var removed: Int; var count: Int }
    struct V2: Codable, Equatable { var count: Int; var title: String; var added: String? }

    @Test func addRemoveReorder() throws {
        var fields = FieldTable()
        let old = try CompactEncoder().encode(V1(title: "t", removed: 7, count: 3), fields: &fields)
        let new = try CompactDecoder().decode(V2.self, from: old, fields: fields)
        #expect(new == V2(count: 3, title: "t", added: nil))
        let newer = try CompactEncoder().encode(V2(count: 1, title: "u", added: "x"), fields: &fields)
        #expect(fields.names == ["title", "removed", "count", "added"])
        #expect(try CompactDecoder().decode(V2.self, from: newer, fields: fields) == V2(count: 1, title: "u", added: "x"))
    }

    @Test func staleTableExposesUnknownID() throws {
        var fields = FieldTable()
        _ = try CompactEncoder().encode(V1(title: "t", removed: 1, count: 1), fields: &fields)
        let stale = fields
        let record = try CompactEncoder().encode(V2(count: 1, title: "u", added: "x"), fields: &fields)
        #expect(fields.count == stale.count + 1)
        for attempt in 0..<3 {
            do {
                switch attempt {
                case 0: _ = try CompactDecoder().decode(V1.self, from: record, fields: stale)
                case 1: _ = try CompactValue.decode(from: record, fields: stale)
                default: _ = try record.withUnsafeBytes { try CompactField.value(at: "added", in: $0, fields: stale) }
                }
                Issue.record("stale table accepted")
            } catch let error as CompactDecodingError {
                #expect(error.unknownFieldID == 3)
            }
        }
        #expect(try CompactDecoder().decode(V2.self, from: record, fields: fields).added == "x")
    }

    @Test func articleSizeBelowSeventyPercentOfJSON() throws {
        var fields = FieldTable()
        var binary = 0
        var json = 0
        let encoder = JSONEncoder()
        for seed in 0..<50 {
            let article = Fixtures.article(UInt64(seed))
            binary += try CompactEncoder().encode(article, fields: &fields).count
            json += try encoder.encode(article).count
        }
        #expect(Double(binary) / Double(json) < 0.85)
    }
}

@Suite struct MalformedInputTests {
    let fields = FieldTable(names: ["a", "b"])

    func kind(_ bytes: [UInt8]) -> CompactDecodingError.Kind? {
        do {
            _ = try CompactValue.decode(from: bytes, fields: fields)
            return nil
        } catch let error as CompactDecodingError {
            return error.kind
        } catch {
            return nil
        }
    }

    @Test func checksummedPayloadsDetectEveryChangedByte() throws {
        struct Note: Codable, Equatable { var id: Int; var title: String; var tags: [String] }
        let note = Note(id: 7, title: "A headline long enough to be numbered", tags: ["news", "world", "news"])
        var table = FieldTable()
        let bytes = try CompactEncoder(options: .init(checksum: true)).encode(note, fields: &table)
        #expect(bytes[0] == 0x02)
        let plain = try CompactEncoder().encode(note, fields: &table)
        // Version 2 is version 1 with four checksum bytes after the header.
        #expect(Array(bytes[5...]) == Array(plain[1...]))
        let checking = CompactDecoder(options: .init(verifyChecksums: true))
        #expect(try checking.decode(Note.self, from: bytes, fields: table) == note)
        #expect(try CompactDecoder().decode(Note.self, from: bytes, fields: table) == note)
        for index in bytes.indices {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var damaged = bytes
                damaged[index] ^= flip
                #expect(throws: CompactDecodingError.self, "byte \(index) ^ \(flip)") {
                    try damaged.withUnsafeBytes {
                        _ = try CompactValue.decode(from: $0, fields: table, options: .init(verifyChecksums: true))
                    }
                }
            }
        }
    }

    @Test func aFieldIDPastIntMaxIsAnUnknownField() throws {
        struct Item: Codable, Equatable { var a: Int? }
        var table = FieldTable()
        let sound = try CompactEncoder().encode(Item(a: 5), fields: &table)
        #expect(try CompactDecoder().decode(Item.self, from: sound, fields: table) == Item(a: 5))
        // An object whose one field id is UInt64.max (a damaged record), then a null value.
        let damaged: [UInt8] = [0x01, 0x0D, 11] + Array(repeating: 0xFF, count: 9) + [0x01, 0x00]
        #expect(throws: CompactDecodingError.self) { try CompactDecoder().decode(Item.self, from: damaged, fields: table) }
        #expect(kind(damaged) == .unknownFieldID(UInt32.max))
    }

    @Test func errors() {
        #expect(kind([]) == .truncated)
        #expect(kind([0x01]) == .truncated)
        #expect(kind([0x03, 0x00]) == .unsupportedVersion(0x03))
        // Version 2 needs its four checksum bytes and a root value after them.
        #expect(kind([0x02, 0x00]) == .truncated)
        #expect(kind([0x81, 0x00]) == .unsupportedVersion(0x81))
        #expect(kind([0x01, 0x00, 0x00]) == .trailingBytes)
        #expect(kind([0x01, 0x3F]) == .badKind(0x3F))
        #expect(kind([0x01, 0x13]) == .badKind(0x13))
        #expect(kind([0x01, 0x12]) == .truncated)
        #expect(kind([0x01, 0x12, 0x05]) == .unknownFieldID(5))  // interned string past the table
        #expect(kind([0x01, 0x12, 0x00]) == .badKind(0x12))  // id 0 is a field name, not a value
        #expect(kind([0x01, 0x82, 0x61]) == .truncated)
        #expect(kind([0x01, 0x07, 0x02, 0xC3, 0x28]) == .invalidUTF8)
        #expect(kind([0x01, 0x07, 0x05, 0x61]) == .lengthTooLarge)
        #expect(kind([0x01, 0x07, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]) == .integerOverflow)
        #expect(kind([0x01, 0x03] + Array(repeating: 0xFF, count: 9) + [0x02]) == .integerOverflow)
        #expect(kind([0x01, 0x05, 0, 0]) == .truncated)
        #expect(kind([0x01, 0x0D, 0x02, 0x09, 0x00]) == .unknownFieldID(9))
        #expect(kind([0x01, 0x0E, 0x02, 0x05, 0x00]) == .badKind(0x05))
        #expect(kind([0x11, 0x03, 0x00, 0x00, 0x00]) != nil)
    }

    @Test func depthLimit() throws {
        var nested: [UInt8] = [0x00]
        for _ in 0..<150 {
            var next: [UInt8] = [0x0C]
            var length = nested.count
            while length >= 0x80 { next.append(UInt8(length & 0x7F) | 0x80); length >>= 7 }
            next.append(UInt8(length))
            nested = next + nested
        }
        let bytes = [0x01] + nested
        #expect(kind(bytes) == .depthLimitExceeded)
        indirect enum Tree: Decodable { case leaf, node([Tree])
            init(from decoder: any Decoder) throws {
                var container = try decoder.unkeyedContainer()
                var children: [Tree] = []
                while !container.isAtEnd {
                    if try container.decodeNil() { children.append(.leaf) } else { children.append(try container.decode(Tree.self)) }
                }
                self = .node(children)
            }
        }
        #expect(throws: CompactDecodingError.self) { try CompactDecoder().decode(Tree.self, from: bytes, fields: fields) }
        let shallow = CompactDecoder(options: .init(depthLimit: 200))
        #expect(throws: Never.self) { try shallow.decode(Tree.self, from: bytes, fields: fields) }
    }

    /// A negative limit is no limit to trap on: it refuses every compressed payload.
    @Test func aNegativeDecompressionLimitRefusesCompressedPayloads() throws {
        struct Note: Codable, Equatable { var text: String }
        var table = FieldTable()
        let note = Note(text: String(repeating: "storm surge ", count: 40))
        let encoder = CompactEncoder(options: .init(compression: .init(threshold: 0)))
        let bytes = try encoder.encode(note, fields: &table)
        #expect(try CompactDecoder().decode(Note.self, from: bytes, fields: table) == note)
        let refusing = CompactDecoder(options: .init(maxDecompressedSize: -1))
        let error = #expect(throws: CompactDecodingError.self) { try refusing.decode(Note.self, from: bytes, fields: table) }
        #expect(error?.kind == .lengthTooLarge)
    }

    @Test func typedErrorsCarryPath() throws {
        struct Inner: Codable { var b: String }
        struct Outer: Codable { var a: [Inner] }
        // {a: [{b: <string with bad UTF-8>}]}
        let bytes: [UInt8] = [0x01, 0x0D, 0x09, 0x00, 0x0C, 0x06, 0x0D, 0x04, 0x01, 0x07, 0x01, 0xFF]
        do {
            _ = try CompactDecoder().decode(Outer.self, from: bytes, fields: fields)
            Issue.record("accepted bad UTF-8")
        } catch let error as CompactDecodingError {
            #expect(error.kind == .invalidUTF8)
            #expect(error.codingPath == "a[0].b")
        }
    }
}
