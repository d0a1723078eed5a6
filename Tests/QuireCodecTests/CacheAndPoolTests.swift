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
