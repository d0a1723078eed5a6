import Foundation
import Testing
@testable import Quire

/// `forEachJSON` writes batches of records' JSON on every core, a batch a core; what it hands out
/// must be what a walk of one record at a time gives.
@Suite struct JSONWalkTests {
    struct Item: Codable, Sendable, Equatable {
        var id: String
        var title: String
        var count: Int
        /// Nil in the parent's records: its name is first interned by another process.
        var extra: String?
    }

    static let items = StoreCollection<Item>(name: "items", key: { .string($0.id) })

    static func item(_ i: Int, extra: String? = nil) -> Item {
        Item(id: String(format: "k%05d", i), title: "title \(i) \"quoted\" \u{1}", count: i * 7, extra: extra)
    }

    /// Every record's JSON, one record at a time (`jsonValue`), in key order.
    static func oneByOne(_ store: Store, reverse: Bool = false) throws -> [(String, [UInt8])] {
        try store.read { snap in
            var keys: [StoreKey] = []
            for record in snap.records(in: items, reverse: reverse) { keys.append(try record.get().key) }
            return try keys.map { ($0.description, try #require(try snap.jsonValue($0, inCollectionNamed: "items"))) }
        }
    }

    static func walked(_ store: Store, range: StoreKeyRange = .all, reverse: Bool = false, stopAfter: Int = .max)
        throws -> [(String, [UInt8])]
    {
        try store.read { snap in
            var out: [(String, [UInt8])] = []
            try snap.forEachJSON(inCollectionNamed: "items", range: range, reverse: reverse) { key, json in
                out.append((key.description, json))
                return out.count < stopAfter
            }
            return out
        }
    }

    /// A fresh store holding `count` items in `collection`.
    static func withItems(_ count: Int, in collection: StoreCollection<Item>, _ body: (Store) async throws -> Void) async throws {
        try await withTemporaryStorePath { path in
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(collection)
            try await store.bulkInsert((0..<count).map { Self.item($0) }, into: collection)
            try await body(store)
        }
    }

    @Test func batchesHandOutWhatOneRecordAtATimeGives() async throws {
        // More batches than the walk's ring holds, so that batches are reused.
        let count = JSONBatchRenderer.batchSize * (Parallelism.parts + 3) + 321
        try await Self.withItems(count, in: Self.items) { store in
            for reverse in [false, true] {
                let expected = try Self.oneByOne(store, reverse: reverse)
                let walked = try Self.walked(store, reverse: reverse)
                #expect(walked.count == count)
                #expect(walked.map(\.0) == expected.map(\.0))
                #expect(walked.map(\.1) == expected.map(\.1))
            }
            let decoded = try JSONDecoder().decode(Item.self, from: Data(try Self.walked(store)[1500].1))
            #expect(decoded == Self.item(1500))
            // Stopped in the middle of a batch: exactly as many calls as asked.
            #expect(try Self.walked(store, stopAfter: 1500).count == 1500)
            #expect(try Self.walked(store, stopAfter: JSONBatchRenderer.batchSize * 4 + 5).count == JSONBatchRenderer.batchSize * 4 + 5)
            #expect(try Self.walked(store, stopAfter: 1).map(\.0) == ["k00000"])
            // A range shorter than a batch.
            let range = StoreKeyRange.closed(.string("k00100"), .string("k00149"))
            #expect(try Self.walked(store, range: range).map(\.0) == (100..<150).map { Self.item($0).id })
        }
    }

    /// A store holding `half` even items written here, then `half` odd ones written by another
    /// process with a field name (`extra`) this one's table lacks.
    static func withItemsHalfWrittenElsewhere(_ half: Int, _ body: (Store) async throws -> Void) async throws {
        try await withTemporaryStorePath { path in
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(Self.items)
            try await store.bulkInsert((0..<half).map { Self.item($0 * 2) }, into: Self.items)
            await #expect(processExitsWith: .success) { [path = path as String, half = half as Int] in
                let other = try Store(path: path)
                try other.register(JSONWalkTests.items)
                try await other.bulkInsert(
                    (0..<half).map { JSONWalkTests.item($0 * 2 + 1, extra: "from elsewhere \($0)") }, into: JSONWalkTests.items)
                other.close()
            }
            try await body(store)
        }
    }

    /// Records another process wrote with a field name this process's table lacks: the batch's
    /// renderers cannot write them and the walk writes them alone, after loading the new names.
    @Test func recordsWithNamesInternedElsewhereAreWrittenAfterAReload() async throws {
        try await Self.withItemsHalfWrittenElsewhere(1500) { store in
            let walked = try Self.walked(store)
            #expect(walked.count == 3000)
            let odd = try JSONDecoder().decode(Item.self, from: Data(walked[1].1))
            #expect(odd == Self.item(1, extra: "from elsewhere 0"))
            let last = try JSONDecoder().decode(Item.self, from: Data(walked[2999].1))
            #expect(last == Self.item(2999, extra: "from elsewhere 1499"))
            #expect(walked.map(\.1) == (try Self.oneByOne(store)).map(\.1))
        }
    }

    /// `forEachFieldValues` (the table dump's walk) hands out, in key order, what each record's
    /// generic value holds at the paths, nil where absent; also for records whose field names
    /// another process interned after this one read its table (read again after a reload).
    @Test func aFieldWalkHandsOutEachRecordsFieldsInKeyOrder() async throws {
        try await Self.withItemsHalfWrittenElsewhere(2_600) { store in
            let paths = ["title", "extra", "count", "missing", "title.0"]
            func walk(stopAfter: Int = .max) throws -> [(StoreKey, [CompactValue?])] {
                try store.read { snap in
                    var out: [(StoreKey, [CompactValue?])] = []
                    try snap.forEachFieldValues(inCollectionNamed: "items", paths: paths) { key, values in
                        out.append((key, values))
                        return out.count < stopAfter
                    }
                    return out
                }
            }
            let walked = try walk()
            let expected: [(StoreKey, [CompactValue?])] = try store.read { snap in
                var out: [(StoreKey, [CompactValue?])] = []
                try snap.forEachGeneric(inCollectionNamed: "items") { key, value in
                    out.append((key, paths.map { value[$0] }))
                    return true
                }
                return out
            }
            #expect(walked.count == 5_200)
            #expect(walked.map(\.0) == expected.map(\.0))
            #expect(walked.map(\.1) == expected.map(\.1))
            #expect(walked[3].1 == [.string(Self.item(3).title), .string("from elsewhere 1"), .int(21), nil, nil])
            #expect(try walk(stopAfter: 2_049).count == 2_049)
        }
    }

    /// Items indexed by a tag that several share, so that an index value has many records.
    static let tagged = StoreCollection<Item>(
        name: "tagged", key: { .string($0.id) },
        indexes: [StoreIndex(name: "tag", kind: .string, field: "title") { [.string("tag\($0.count % 5)")] }])

    /// The walk in an index's order hands out what looking each entry's record up gives.
    @Test func anIndexWalkHandsOutEachEntrysRecordInIndexOrder() async throws {
        let count = JSONBatchRenderer.batchSize * 3 + 17
        try await Self.withItems(count, in: Self.tagged) { store in
            func expected(_ range: StoreKeyRange, reverse: Bool) throws -> [(String, [UInt8])] {
                try store.read { snap in
                    try snap.indexKeys("tagged", "tag", range: range, reverse: reverse).map {
                        ($0.description, try #require(try snap.jsonValue($0, inCollectionNamed: "tagged")))
                    }
                }
            }
            func walked(_ range: StoreKeyRange, reverse: Bool, stopAfter: Int = .max) throws -> [(String, [UInt8])] {
                try store.read { snap in
                    var out: [(String, [UInt8])] = []
                    try snap.forEachJSON(inCollectionNamed: "tagged", byIndex: "tag", range: range, reverse: reverse) { key, json in
                        out.append((key.description, json))
                        return out.count < stopAfter
                    }
                    return out
                }
            }
            let ranges: [StoreKeyRange] = [.all, .exactly(.string("tag3")), .closed(.string("tag1"), .string("tag2"))]
            for range in ranges {
                for reverse in [false, true] {
                    let want = try expected(range, reverse: reverse)
                    let got = try walked(range, reverse: reverse)
                    #expect(!want.isEmpty)
                    #expect(got.map(\.0) == want.map(\.0), "\(range) reverse \(reverse)")
                    #expect(got.map(\.1) == want.map(\.1), "\(range) reverse \(reverse)")
                }
            }
            let all = try walked(.all, reverse: false)
            #expect(all.count == count)
            // In index order, not key order: every tag0 record before the first tag1 one.
            let tags = try all.map { try JSONDecoder().decode(Item.self, from: Data($0.1)).count % 5 }
            #expect(tags == tags.sorted())
            #expect(try walked(.all, reverse: false, stopAfter: 1500).map(\.0) == all.prefix(1500).map(\.0))
        }
    }
}
