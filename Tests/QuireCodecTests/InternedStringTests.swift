import Foundation
import QuireCodec
import Testing

/// A record with interned keys: `kind` (optional) and the strings of `tags`.
struct Tagged: CompactCodable, Hashable {
    var title: String
    var kind: String?
    var tags: [String]
    var note: String?

    static let compactKeys = CompactKeySet(["title", "kind", "tags", "note"], interned: ["kind", "tags"])

    func encode(to writer: inout CompactObjectWriter) throws {
        writer.write(title, for: 0)
        writer.writeIfPresent(kind, for: 1)
        writer.write(tags, for: 2)
        writer.writeIfPresent(note, for: 3)
    }

    init(title: String, kind: String? = nil, tags: [String] = [], note: String? = nil) {
        self.title = title
        self.kind = kind
        self.tags = tags
        self.note = note
    }

    init(from reader: inout CompactObjectReader) throws {
        var title: String?
        self.init(title: "")
        while let key = try reader.next() {
            switch key {
            case 0: title = try reader.readString()
            case 1: kind = try reader.readString()
            case 2: tags = try reader.readStrings()
            case 3: note = try reader.readString()
            default: break
            }
        }
        self.title = try reader.require(title, 0)
    }
}

/// Hides a value's hand-written conformance, so the encoder and decoder take the Codable path.
struct ViaCodable<Value: Codable>: Codable {
    var value: Value
    init(_ value: Value) { self.value = value }
    init(from decoder: any Decoder) throws { value = try Value(from: decoder) }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}

@Suite struct InternedStringTests {
    /// Canonically equivalent values (`café` composed and decomposed, `Å` as the angstrom sign and
    /// as the letter) are two entries: the table's lookup compared `String`s, which merged them,
    /// and the second came back in the first one's bytes. Field names too.
    @Test func canonicallyEquivalentValuesAreInternedApart() throws {
        var fields = FieldTable()
        let forms = ["caf\u{E9}", "cafe\u{301}", "\u{212B}ngstrom", "\u{C5}ngstrom"]
        let records = try forms.map { try CompactEncoder().encode(Tagged(title: "t", kind: $0, tags: forms), fields: &fields) }
        #expect(fields.internedValueCount == 4)
        for (form, record) in zip(forms, records) {
            let decoded = try CompactDecoder().decode(Tagged.self, from: record, fields: fields)
            #expect(Array(decoded.kind!.utf8) == Array(form.utf8))
            #expect(decoded.tags.map { Array($0.utf8) } == forms.map { Array($0.utf8) })
        }
        #expect(fields.id(of: "\u{1}caf\u{E9}") != nil && fields.id(of: "\u{1}caf\u{E9}") != fields.id(of: "\u{1}cafe\u{301}"))
        var names = FieldTable()
        #expect(names.intern("caf\u{E9}") != names.intern("cafe\u{301}"))
        #expect(names != FieldTable(names: ["caf\u{E9}", "caf\u{E9}"]))
    }

    @Test func goldenBytesAndTable() throws {
        var fields = FieldTable()
        let record = try CompactEncoder().encode(Tagged(title: "abc", kind: "news", tags: ["news", "xy", "sport"]), fields: &fields)
        // Values are interned on first use, between the names, in write order; "xy" is too short.
        #expect(fields.names == ["title", "kind", "\u{1}news", "tags", "\u{1}sport"])
        #expect(fields.internedValueCount == 2)
        #expect(fields.internedValue(of: 2) == "news")
        #expect(fields.internedValue(of: 1) == nil)
        #expect(
            record == [
                0x01, 0x0D, 0x12,
                0x00, 0x83, 0x61, 0x62, 0x63,  // title: "abc"
                0x01, 0x12, 0x02,  // kind: interned string, id 2
                0x03, 0x0C, 0x07, 0x12, 0x02, 0x82, 0x78, 0x79, 0x12, 0x04,  // tags: [id 2, "xy", id 4]
            ])
        // A table loaded from stored names knows its values again.
        let reloaded = FieldTable(names: fields.names)
        #expect(reloaded.internedValueCount == 2)
        #expect(reloaded.internedValue(of: 4) == "sport")
        var again = reloaded
        #expect(try CompactEncoder().encode(Tagged(title: "abc", kind: "news", tags: ["news", "xy", "sport"]), fields: &again) == record)
        #expect(again == reloaded)
    }

    @Test func everyReaderReadsInternedStrings() throws {
        var fields = FieldTable()
        let value = Tagged(title: "headline", kind: "Business Day", tags: ["Business Day", "markets", "é东京🎉"], note: "Business Day")
        let fast = try CompactEncoder().encode(value, fields: &fields)
        let codable = try CompactEncoder().encode(ViaCodable(value), fields: &fields)
        #expect(fast != codable)
        #expect(fast.count < codable.count)
        let decoder = CompactDecoder()
        for bytes in [fast, codable] {
            #expect(try decoder.decode(Tagged.self, from: bytes, fields: fields) == value)
            #expect(try decoder.decode(ViaCodable<Tagged>.self, from: bytes, fields: fields).value == value)
            try bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws in
                #expect(try CompactField.value(at: "kind", in: raw, fields: fields) == .string("Business Day"))
                #expect(try CompactField.value(at: "tags.2", in: raw, fields: fields) == .string("é东京🎉"))
            }
        }
        // Generic values (and so JSON dumps) show interned strings as the plain strings.
        let generic = try CompactValue.decode(from: fast, fields: fields)
        #expect(generic == (try CompactValue.decode(from: codable, fields: fields)))
        #expect(generic.jsonString() == #"{"title":"headline","kind":"Business Day","tags":["Business Day","markets","é东京🎉"],"note":"Business Day"}"#)
        // A URL read accepts an interned string like any string form.
        struct Link: Codable, Equatable { var kind: URL }
        #expect(try decoder.decode(Link.self, from: try CompactEncoder().encode(Tagged(title: "t", kind: "https://x.test/k"), fields: &fields), fields: fields)
            == Link(kind: URL(string: "https://x.test/k")!))
    }

    @Test func boundsKeepValuesOut() throws {
        var fields = FieldTable()
        let long = String(repeating: "ü", count: 33)  // 66 UTF-8 bytes
        let edge = String(repeating: "a", count: 64)
        let record = try CompactEncoder().encode(Tagged(title: "t", kind: long, tags: ["ab", edge, "abc"]), fields: &fields)
        #expect(fields.names == ["title", "kind", "tags", "\u{1}" + edge, "\u{1}abc"])
        #expect(try CompactDecoder().decode(Tagged.self, from: record, fields: fields).kind == long)

        // A full table writes new values out, and still interns the values it holds.
        var full = FieldTable(names: (0..<FieldTable.internedValueLimit).map { "\u{1}value \($0)" })
        #expect(full.internedValueCount == FieldTable.internedValueLimit)
        let count = full.count
        let bytes = try CompactEncoder().encode(Tagged(title: "t", kind: "fresh", tags: ["value 7"]), fields: &full)
        #expect(full.count == count + 3)  // the three field names, no value
        #expect(full.internValue("another") == nil)
        #expect(full.internValue("value 7") == 7)
        #expect(try CompactDecoder().decode(Tagged.self, from: bytes, fields: full) == Tagged(title: "t", kind: "fresh", tags: ["value 7"]))
        #expect(try CompactValue.decode(from: bytes, fields: full)["tags"] == .array([.string("value 7")]))
    }

    @Test func staleTableExposesUnknownID() throws {
        var fields = FieldTable()
        _ = try CompactEncoder().encode(Tagged(title: "t", kind: "news", tags: ["news"]), fields: &fields)
        let stale = fields
        let record = try CompactEncoder().encode(Tagged(title: "t", kind: "sport"), fields: &fields)
        #expect(fields.count == stale.count + 1)
        let newID = UInt32(stale.count)
        for attempt in 0..<4 {
            do {
                switch attempt {
                case 0: _ = try CompactDecoder().decode(Tagged.self, from: record, fields: stale)
                case 1: _ = try CompactDecoder().decode(ViaCodable<Tagged>.self, from: record, fields: stale)
                case 2: _ = try CompactValue.decode(from: record, fields: stale)
                default: _ = try record.withUnsafeBytes { try CompactField.value(at: "kind", in: $0, fields: stale) }
                }
                Issue.record("stale table accepted, attempt \(attempt)")
            } catch let error as CompactDecodingError {
                #expect(error.unknownFieldID == newID, "attempt \(attempt)")
            }
        }
        #expect(try CompactDecoder().decode(Tagged.self, from: record, fields: fields).kind == "sport")
    }

    @Test func idsFollowTheCallersTable() throws {
        // One encoder, two tables with different ids for the same value: each record uses its own table's id.
        let encoder = CompactEncoder()
        var first = FieldTable()
        var second = FieldTable(names: ["padding", "\u{1}other"])
        for round in 0..<6 {
            let value = Tagged(title: "r\(round)", kind: round % 2 == 0 ? "alpha" : "beta", tags: ["gamma", "alpha"])
            let a = try encoder.encode(value, fields: &first)
            let b = try encoder.encode(value, fields: &second)
            #expect(try CompactDecoder().decode(Tagged.self, from: a, fields: first) == value)
            #expect(try CompactDecoder().decode(Tagged.self, from: b, fields: second) == value)
        }
        #expect(first.internedValueCount == 3)
        #expect(second.internedValueCount == 4)
        // A field table entry that merely starts like a value is read as the value it spells.
        var generic = FieldTable()
        let keyed = try CompactEncoder().encode(CompactValue.object([.init(key: "\u{1}alpha", value: .int(1))]), fields: &generic)
        _ = try CompactEncoder().encode(Tagged(title: "t", kind: "alpha"), fields: &generic)
        #expect(generic.names == ["\u{1}alpha", "title", "kind", "tags"])
        #expect(try CompactValue.decode(from: keyed, fields: generic)["\u{1}alpha"] == .int(1))
    }
}
