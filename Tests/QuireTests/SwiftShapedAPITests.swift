import Foundation
import Quire
import QuireNews
import Testing

/// The API in Swift's own terms: key-path indexes, `Identifiable` keys, Swift ranges, batch
/// gets, schemas declared at open and temporary stores.
@Suite struct SwiftShapedAPITests {
    struct Note: Codable, Sendable, Hashable, Identifiable {
        var id: String
        var day: Date
        var tags: [String]
        var priority: Int?
    }

    static let byDay = StoreIndex(\Note.day)
    static let byTag = StoreIndex(\Note.tags)
    static let byPriority = StoreIndex(\Note.priority)
    static let notes = StoreCollection<Note>(name: "notes", indexes: [byDay, byTag, byPriority])

    @Test func keyPathIndexesDeriveTheirNameKindAndField() {
        #expect(Self.byDay.name == "day" && Self.byDay.kind == .date && Self.byDay.field == "day")
        #expect(Self.byTag.name == "tags" && Self.byTag.kind == .string)
        #expect(Self.byPriority.kind == .int)
        let note = Note(id: "n", day: Date(timeIntervalSince1970: 86_400), tags: ["a", "b"], priority: nil)
        #expect(Self.byTag.keys(note) == [.string("a"), .string("b")])
        #expect(Self.byPriority.keys(note).isEmpty)
        #expect(Self.notes.key(note) == .string("n"))
    }

    @Test func aTemporaryStoreWithASchemaIsReadyToWriteAndGoneAfterwards() async throws {
        var kept = ""
        let day = Date(timeIntervalSince1970: 1_700_000_000)
        let found = try await Store.withTemporary(schema: StoreSchema(Self.notes)) { store in
            kept = store.path
            let all = (0..<20).map {
                Note(id: String(format: "n%02d", $0), day: day.addingTimeInterval(Double($0) * 3_600), tags: ["t\($0 % 3)"], priority: $0 % 2 == 0 ? $0 : nil)
            }
            _ = try await store.bulkInsert(all, into: Self.notes)
            return try store.read { snap in
                (
                    try snap.get([.string("n03"), .string("missing"), .string("n07")], from: Self.notes).map { $0?.id },
                    try snap.values(of: Self.notes, range: StoreKeyRange(StoreKey.string("n05")..<StoreKey.string("n08"))).map(\.id),
                    try snap.values(in: Self.byTag, of: Self.notes, range: .exactly(.string("t1"))).count,
                    try snap.keys(in: Self.byDay, of: Self.notes, range: .from(.date(day.addingTimeInterval(18 * 3_600)))),
                    try snap.values(in: Self.byPriority, of: Self.notes, range: StoreKeyRange(...StoreKey.int(4))).map(\.id)
                )
            }
        }
        #expect(found.0 == ["n03", nil, "n07"])
        #expect(found.1 == ["n05", "n06", "n07"])
        #expect(found.2 == 7)
        #expect(found.3 == [StoreKey.string("n18"), StoreKey.string("n19")])
        #expect(found.4 == ["n00", "n02", "n04"])
        #expect(!kept.isEmpty && !FileManager.default.fileExists(atPath: kept))
    }

    /// A program's own view type gets its store from the transaction it wraps: it cannot name
    /// another store, whose database handles would mean other databases in this transaction.
    struct OwnView: StoreReading, ~Copyable { let _context: StoreViewContext }

    @Test func anEmbeddersOwnViewReadsTheStoreOfItsTransaction() async throws {
        let day = Date(timeIntervalSince1970: 1_700_000_000)
        try await Store.withTemporary(schema: StoreSchema(Self.notes)) { first in
            try await Store.withTemporary(schema: StoreSchema(Self.notes)) { second in
                try await first.put(Note(id: "n", day: day, tags: ["first"], priority: 1), in: Self.notes)
                try await second.put(Note(id: "n", day: day, tags: ["second"], priority: 2), in: Self.notes)
                let seen = try second.read { snap in
                    let own = OwnView(_context: snap._context)
                    return (own.store.path, try own.get(.string("n"), from: Self.notes)?.tags, Mirror(reflecting: snap._context).children.count)
                }
                #expect(seen.0 == second.path)
                #expect(seen.1 == ["second"])
                // Reflection hands out neither the store (its writes) nor the transaction.
                #expect(seen.2 == 0)
            }
        }
    }
}
