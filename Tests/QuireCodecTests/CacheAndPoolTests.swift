import Foundation
import QuireCodec
import Testing

/// The caches and pools kept between calls must never change what a call produces.
@Suite struct CacheAndPoolTests {
    struct Small: Codable, Hashable {
        var b: Int
        var a: String?
    }

    @Test func keyCachesFollowTheCallersFieldTable() throws {
        let encoder = CompactEncoder()
        var first = FieldTable()
        let bytesA = try encoder.encode(Small(b: 1, a: "x"), fields: &first)
        #expect(first.names == ["b", "a"])
        // A different table: cached ids from the first call must not leak into it.
        var other = FieldTable(names: ["zz", "a", "b"])
        let bytesB = try encoder.encode(Small(b: 1, a: "x"), fields: &other)
        #expect(other.names == ["zz", "a", "b"])
        #expect(bytesA != bytesB)
        // And back to the first table, reusing whatever the encoder remembered.
        let again = try encoder.encode(Small(b: 1, a: "x"), fields: &first)
        #expect(again == bytesA)
        let decoder = CompactDecoder()
        #expect(try decoder.decode(Small.self, from: bytesB, fields: other) == Small(b: 1, a: "x"))
        #expect(try decoder.decode(Small.self, from: again, fields: first) == Small(b: 1, a: "x"))
    }

    /// Throws from inside its encoding, halfway through a record.
    struct Failing: Encodable {
        enum Keys: CodingKey { case a, b }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode("started", forKey: .a)
            throw EncodingError.invalidValue(self, .init(codingPath: [Keys.b], debugDescription: "refused"))
        }
    }

    @Test func lentBytesAreTheReturnedBytesWhateverCameBefore() throws {
        // One encoder lending bytes (its buffers kept between calls) and one returning arrays, each
        // with its own tables, through the same sequence: tables switching, a failed record, a
        // record too big to keep the buffers of, compact and Codable values.
        let lending = CompactEncoder()
        let returning = CompactEncoder()
        var (lentA, returnedA) = (FieldTable(), FieldTable())
        var (lentB, returnedB) = (FieldTable(names: ["zz", "note", "title"]), FieldTable(names: ["zz", "note", "title"]))
        func same<T: Encodable>(_ value: T, _ lent: inout FieldTable, _ returned: inout FieldTable) throws {
            let bytes = try lending.withEncoded(value, fields: &lent) { Array($0) }
            #expect(bytes == (try returning.encode(value, fields: &returned)))
            #expect(lent == returned)
        }
        for index in 0..<40 {
            try same(Fixtures.article(UInt64(index)), &lentA, &returnedA)
            try same(Tagged(title: "t\(index)", kind: index % 2 == 0 ? "news" : "op-ed", tags: ["a\(index % 5)"]), &lentB, &returnedB)
            if index == 10 {
                #expect(throws: EncodingError.self) { try lending.withEncoded(Failing(), fields: &lentA) { Array($0) } }
            }
            if index == 20 {
                try same(Small(b: index, a: String(repeating: "é", count: 100_000)), &lentA, &returnedA)
            }
        }
        let decoded = try CompactDecoder().decode(
            Tagged.self, from: try lending.withEncoded(Tagged(title: "last", tags: ["x"]), fields: &lentB) { Array($0) },
            fields: lentB)
        #expect(decoded == Tagged(title: "last", tags: ["x"]))
    }

    @Test func missingAndReorderedFieldsAfterCachedLookups() throws {
        let encoder = CompactEncoder()
        let decoder = CompactDecoder()
        var fields = FieldTable()
        let values = [Small(b: 1, a: nil), Small(b: 2, a: "two"), Small(b: 3, a: nil), Small(b: 4, a: "four")]
        for value in values {
            let bytes = try encoder.encode(value, fields: &fields)
            #expect(try decoder.decode(Small.self, from: bytes, fields: fields) == value)
        }
        let list = try encoder.encode(values, fields: &fields)
        #expect(try decoder.decode([Small].self, from: list, fields: fields) == values)
    }

    /// Training writes only into the dictionary's own buffer, whatever the capacity asked and
    /// however few the samples: told a capacity larger than the buffer it was given, zstd wrote
    /// past it (a heap corrupted in a store's first load of a few records).
    @Test(arguments: [4_096, 112 << 10, 1 << 30, Int.max])
    func aDictionaryIsTrainedInsideItsBuffer(capacity: Int) throws {
        let samples = (0..<400).map { index in
            Array("record \(index): news of the day \(index % 11), words \(String(repeating: "w\(index % 7) ", count: 8))".utf8)
        }
        let total = samples.reduce(0) { $0 + $1.count }
        do {
            let dictionary = try ZstdDictionary.train(samples: samples, capacity: capacity)
            #expect(!dictionary.isEmpty && dictionary.count <= min(capacity, max(total, 16 << 20)))
            let encoder = CompactEncoder(options: .init(compression: .init(threshold: 16, dictionary: dictionary)))
            let decoder = CompactDecoder(options: .init(dictionary: dictionary))
            var fields = FieldTable()
            let value = Small(b: 7, a: String(repeating: "w3 news of the day ", count: 12))
            #expect(try decoder.decode(Small.self, from: encoder.encode(value, fields: &fields), fields: fields) == value)
        } catch let error as ZstdDictionary.TrainingError {
            // Samples too few for the size asked: zstd says so.
            #expect(capacity > total, "\(error)")
        }
    }

    @Test func concurrentEncodeAndDecodeWithOneCoderAndDictionary() async throws {
        var fields = FieldTable()
        let samples = try (0..<300).map { index in
            try CompactEncoder().encode(
                Small(b: index, a: String(repeating: "word\(index % 7) ", count: 20 + index % 13)), fields: &fields)
        }
        let dictionary = try ZstdDictionary.train(samples: samples, capacity: 4096)
        let encoder = CompactEncoder(options: .init(compression: .init(threshold: 16, dictionary: dictionary)))
        let decoder = CompactDecoder(options: .init(dictionary: dictionary))
        let table = fields
        let failures = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<4 {
                group.addTask {
                    var failures = 0
                    var local = table
                    for index in 0..<200 {
                        let value = Small(b: task * 1000 + index, a: String(repeating: "word\(index % 7) ", count: 30))
                        let bytes = try encoder.encode(value, fields: &local)
                        if try decoder.decode(Small.self, from: bytes, fields: local) != value { failures += 1 }
                    }
                    return failures
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(failures == 0)
    }
}
