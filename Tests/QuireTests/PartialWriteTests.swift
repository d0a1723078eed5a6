import Foundation
import Quire
import Synchronization
import Testing

/// A note whose later version refuses what an earlier one stored (`legacy` texts), and whose
/// encoding fails for one text: the failures of an operation that happen part way.
private struct StrictNote: Codable, Sendable, Equatable {
    var id: Int
    var text: String

    enum CodingKeys: String, CodingKey { case id, text }

    init(id: Int, text: String) {
        self.id = id
        self.text = text
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int.self, forKey: .id)
        text = try c.decode(String.self, forKey: .text)
        if text.hasPrefix("legacy") && StrictNote.strict.withLock({ $0 }) {
            throw DecodingError.dataCorruptedError(forKey: .text, in: c, debugDescription: "a legacy note")
        }
    }

    func encode(to encoder: any Encoder) throws {
        if text == "unencodable" { throw EncodingError.invalidValue(text, .init(codingPath: [], debugDescription: "refused")) }
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(text, forKey: .text)
    }

    /// Off while the legacy records are written, on for the rest of a test.
    static let strict = Mutex(false)
}

/// An operation that fails leaves no half of itself committed: what decodes the record it
/// replaces or deletes runs before its first write, and one that throws after a write dooms
/// its transaction even when the body catches the error.
@Suite(.serialized) struct PartialWriteTests {
    private let notes = StoreCollection<StrictNote>(name: "notes", key: { .int(Int64($0.id)) }).searchable(
        StoreSearchIndex<StrictNote>(fields: [StoreSearchField(name: "text", id: 0, weight: 1)]) { [SearchText(field: 0, $0.text)] })

    private func withLegacyStore(_ body: (Store) async throws -> Void) async throws {
        StrictNote.strict.withLock { $0 = false }
        defer { StrictNote.strict.withLock { $0 = false } }
        try await Store.withTemporary(schema: StoreSchema(notes)) { store in
            try await store.put(StrictNote(id: 1, text: "legacy walrus"), in: notes)
            try await store.put(StrictNote(id: 3, text: "old seal"), in: notes)
            StrictNote.strict.withLock { $0 = true }
            try await body(store)
        }
    }

    private func hits(_ store: Store, _ query: String) throws -> [Int] {
        try store.read { snap in try snap.search(query, in: notes).compactMap { $0.key.intValue.map(Int.init) } }
    }

    @Test func anUpsertOfARecordThatNoLongerDecodesFailsAloneInABody() async throws {
        try await withLegacyStore { store in
            try await store.write { [notes] txn in
                #expect(throws: StoreError.self) { try txn.put(StrictNote(id: 1, text: "fresh penguin"), in: notes) }
                try txn.put(StrictNote(id: 2, text: "fresh otter"), in: notes)
                try txn.delete(.int(3), from: notes)
            }
            #expect(try hits(store, "otter") == [2])
            #expect(try hits(store, "penguin").isEmpty && hits(store, "seal").isEmpty)
            #expect(try hits(store, "walrus") == [1])  // the old record and its postings, as they were
            #expect(try store.verify().isSound)
        }
    }

    @Test func aGroupCommitKeepsTheOthersPostings() async throws {
        try await withLegacyStore { store in
            async let first: Void = store.put(StrictNote(id: 1, text: "fresh penguin"), in: notes)
            async let second: Void = store.put(StrictNote(id: 2, text: "fresh otter"), in: notes)
            async let third: Void = store.delete(.int(3), from: notes)
            let results = [(try? await first) != nil, (try? await second) != nil, (try? await third) != nil]
            #expect(results == [false, true, true])
            let (otter, seal, sound) = (try hits(store, "otter"), try hits(store, "seal"), try store.verify().isSound)
            #expect(otter == [2] && seal.isEmpty && sound)
        }
    }

    @Test func anOperationThatThrowsAfterAWriteDoomsItsTransaction() async throws {
        try await withLegacyStore { store in
            await #expect(throws: StoreError.self) {
                try await store.write { [notes] txn in
                    // The first note is written before the second fails to encode: caught, the
                    // write still cannot commit half of `put(contentsOf:)`.
                    do {
                        try txn.put(contentsOf: [StrictNote(id: 5, text: "half"), StrictNote(id: 6, text: "unencodable")], in: notes)
                    } catch {}
                }
            }
            let half = try store.read { [notes] snap in try snap.get(.int(5), from: notes) }
            #expect(half == nil)
            #expect(try hits(store, "half").isEmpty)
            // A failure with nothing written leaves the transaction free to commit.
            try await store.write { [notes] txn in
                do { try txn.put(StrictNote(id: 6, text: "unencodable"), in: notes) } catch {}
                try txn.put(StrictNote(id: 7, text: "kept"), in: notes)
            }
            #expect(try hits(store, "kept") == [7])
        }
    }
}
