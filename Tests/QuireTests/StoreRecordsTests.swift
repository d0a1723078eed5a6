import Foundation
import Quire
import QuireTestSupport
import Testing

/// `for … in snapshot.records(in:)`: lazy walks in key order, their errors, their lifetime;
/// and the one typed error of the store's operations.
@Suite struct StoreRecordsTests {
    struct Item: Codable, Sendable, Hashable, Identifiable {
        var id: String
        var n: Int
    }

    struct Other: Codable, Sendable, Hashable, Identifiable {
        var id: String
        var title: String
    }

    static let items = StoreCollection<Item>(name: "items")

    static func filled(_ body: (Store) async throws -> Void) async throws {
        try await Store.withTemporary(schema: StoreSchema(items)) { store in
            let all = (0..<50).map { Item(id: String(format: "k%02d", $0), n: $0) }
            _ = try await store.bulkInsert(all.shuffled(), into: items)
            try await body(store)
        }
    }

    @Test func aLoopWalksKeysInOrderOrReverseWithinTheRange() async throws {
        try await Self.filled { store in
            let (forward, backward, ranged, firstThree) = try store.read { snap in
                var forward: [Int] = []
                for record in snap.records(in: Self.items) { forward.append(try record.get().value.n) }
                var backward: [String] = []
                for record in snap.records(in: Self.items, reverse: true) { backward.append(try record.get().key.description) }
                let range = StoreKeyRange(StoreKey.string("k10")..<StoreKey.string("k13"))
                let ranged = try snap.records(in: Self.items, range: range).map { try $0.get().value.id }
                var firstThree: [Int] = []
                for record in snap.records(in: Self.items) {
                    firstThree.append(try record.get().value.n)
                    if firstThree.count == 3 { break }
                }
                return (forward, backward, ranged, firstThree)
            }
            #expect(forward == Array(0..<50))
            #expect(backward.count == 50 && backward.first?.contains("k49") == true && backward.last?.contains("k00") == true)
            #expect(ranged == ["k10", "k11", "k12"])
            #expect(firstThree == [0, 1, 2])
        }
    }

    /// Decodes every value but 13 (as a record written by an older version of a type might not).
    struct Picky: Codable, Sendable, Identifiable {
        var id: String
        var n: Int

        init(id: String, n: Int) {
            self.id = id
            self.n = n
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            id = try c.decode(String.self, forKey: .id)
            n = try c.decode(Int.self, forKey: .n)
            if n == 13 { throw DecodingError.dataCorruptedError(forKey: .n, in: c, debugDescription: "13 is refused") }
        }
    }

    @Test func aRecordThatDoesNotDecodeEndsTheWalkWithAStoreErrorNamingIt() async throws {
        let picky = StoreCollection<Picky>(name: "picky")
        try await Store.withTemporary(schema: StoreSchema(picky)) { store in
            _ = try await store.bulkInsert((0..<20).map { Picky(id: String(format: "p%02d", $0), n: $0) }, into: picky)
            let (decoded, failures) = try store.read { snap in
                var decoded: [Int] = []
                var failures: [StoreError] = []
                for record in snap.records(in: picky) {
                    switch record {
                    case .success(let pair): decoded.append(pair.value.n)
                    case .failure(let error): failures.append(error)
                    }
                }
                return (decoded, failures)
            }
            #expect(decoded == Array(0..<13))
            #expect(failures.count == 1)
            #expect(failures.first?.code == .codec)
            #expect(failures.first?.message.contains("p13") == true && failures.first?.message.contains("picky") == true)
        }
    }

    @Test func iteratingARecordSequenceAfterItsReadEndedTraps() async throws {
        // The trapping child cannot remove its store: the test's own process makes and removes it.
        try await withTemporaryDirectory("trap", create: false) { path in
            let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                [path = path as String] in
                let store = try Store(path: path, schema: StoreSchema(StoreRecordsTests.items))
                try await store.put(Item(id: "x", n: 1), in: StoreRecordsTests.items)
                let escaped = try store.read { snap in snap.records(in: StoreRecordsTests.items) }
                for record in escaped { _ = try record.get() }
            }
            #expect(String(decoding: result.standardErrorContent, as: UTF8.self).contains("used after it ended"))
        }
    }

    @Test func storeOperationsThrowOneTypedError() async throws {
        try await Self.filled { store in
            let unknown = StoreCollection<Item>(name: "never-registered")
            // Typed throws: the closure's error type is StoreError, checked by the compiler.
            let result: Result<Item?, StoreError> = try store.read { snap in Result { () throws(StoreError) in try snap.get(StoreKey.string("k01"), from: unknown) } }
            guard case .failure(let error) = result else {
                Issue.record("reading an unregistered collection succeeded")
                return
            }
            #expect(error.code == .unknownCollection)
            #expect(error.message.contains("never-registered"))
            do {
                try await store.put(Item(id: "", n: 0), in: Self.items)
                Issue.record("an empty key was stored")
            } catch StoreError.invalidKey {
                // `catch StoreError.invalidKey` matches by code.
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }
}
