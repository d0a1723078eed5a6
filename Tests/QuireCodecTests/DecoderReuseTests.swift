import Foundation
import QuireCodec
import Testing

/// A record whose `init(from:)` decodes another payload on the same thread, nested in its own decode.
private struct Envelope: Codable, Equatable {
    var label: String
    var inner: Tagged

    static let innerFields = InnerFieldTable()

    init(label: String, inner: Tagged) {
        self.label = label
        self.inner = inner
    }

    private enum CodingKeys: String, CodingKey { case label, payload }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(label, forKey: .label)
        var fields = Envelope.innerFields.table
        try container.encode(Data(CompactEncoder().encode(inner, fields: &fields)), forKey: .payload)
        Envelope.innerFields.table = fields
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let payload = try container.decode(Data.self, forKey: .payload)
        // Nested: the outer decode still uses this thread's decoder state.
        inner = try CompactDecoder().decode(Tagged.self, from: [UInt8](payload), fields: Envelope.innerFields.table)
        label = try container.decode(String.self, forKey: .label)
    }
}

/// The inner records' field table, shared by the encode and decode of one test.
private final class InnerFieldTable: @unchecked Sendable {
    // @unchecked: the test that uses it runs on one thread.
    var table = FieldTable()
}

@Suite(.serialized) struct DecoderReuseTests {
    @Test func decodeInsideDecodeOnOneThread() throws {
        var fields = FieldTable()
        let value = Envelope(label: "outer ✓", inner: Tagged(title: "inner", kind: "world", tags: ["a1", "books"]))
        let bytes = try CompactEncoder().encode(value, fields: &fields)
        #expect(try CompactDecoder().decode(Envelope.self, from: bytes, fields: fields) == value)
        // The state is free again afterwards: a plain decode on this thread still works.
        var other = FieldTable()
        let tagged = Tagged(title: "after", kind: "sport", note: "n")
        #expect(try CompactDecoder().decode(Tagged.self, from: CompactEncoder().encode(tagged, fields: &other), fields: other) == tagged)
    }

    @Test func alternatingFieldTablesGiveEachRecordItsOwnNames() throws {
        // Two tables that give the same names different ids: a state reused between the calls must
        // not keep the first table's id → key mapping.
        var first = FieldTable(names: ["title", "note", "kind", "tags"])
        var second = FieldTable(names: ["note", "tags", "title", "kind"])
        let a = Tagged(title: "first", kind: "alpha", tags: ["x1y"], note: "one")
        let b = Tagged(title: "second", kind: "beta", tags: ["z2w"], note: "two")
        let bytesA = try CompactEncoder().encode(a, fields: &first)
        let bytesB = try CompactEncoder().encode(b, fields: &second)
        let decoder = CompactDecoder()
        for _ in 0..<3 {
            #expect(try decoder.decode(Tagged.self, from: bytesA, fields: first) == a)
            #expect(try decoder.decode(Tagged.self, from: bytesB, fields: second) == b)
        }
    }

    @Test func aTableThatGrewBetweenDecodesGivesItsNewValues() throws {
        // The state keeps the values it was last given (to skip copying them again): a table that
        // interned more values since must be noticed, though the caller's variable is the same.
        var fields = FieldTable()
        let decoder = CompactDecoder()
        for round in 0..<20 {
            let value = Tagged(title: "t\(round)", kind: "kind number \(round)", tags: ["tag \(round % 3)"])
            let bytes = try CompactEncoder().encode(value, fields: &fields)  // interns a new kind each round
            #expect(try decoder.decode(Tagged.self, from: bytes, fields: fields) == value)
        }
        #expect(fields.internedValueCount >= 20)
    }

    @Test func aFailedDecodeLeavesNothingBehind() throws {
        var fields = FieldTable()
        let good = Tagged(title: "ok", kind: "kind", tags: ["tag"], note: "note")
        let bytes = try CompactEncoder().encode(good, fields: &fields)
        let decoder = CompactDecoder()
        // Truncations throw midway through the record, with the path of the field they hit.
        for cut in 1..<bytes.count {
            #expect(throws: (any Error).self) { try decoder.decode(Tagged.self, from: Array(bytes[..<cut]), fields: fields) }
        }
        #expect(try decoder.decode(Tagged.self, from: bytes, fields: fields) == good)
    }

    @Test func threadsDecodeIndependently() async throws {
        var fields = FieldTable()
        let values = (0..<200).map { Tagged(title: "title \($0) é", kind: "k\($0 % 7)xx", tags: ["t\($0 % 3)ab"], note: "\($0)") }
        let encoded = try values.map { try CompactEncoder().encode($0, fields: &fields) }
        let table = fields
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var bad = 0
                    for _ in 0..<20 {
                        for (value, bytes) in zip(values, encoded)
                        where (try? CompactDecoder().decode(Tagged.self, from: bytes, fields: table)) != value {
                            bad += 1
                        }
                    }
                    return bad
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }
}
