import Foundation
import Quire
import Testing

/// Upserts move index entries: read from the old record's fields for key-path indexes, from
/// its decoded value otherwise — either way the indexes end exactly as the new values say.
@Suite struct UpsertIndexTests {
    struct Story: Codable, Sendable, Hashable, Identifiable {
        var id: String
        var day: Date
        var desk: String?
        var tags: [String]
    }

    /// A type whose coding renames a property: its stored field is not the property's name,
    /// so old keys cannot be read from a field named after the key path.
    struct Renamed: Codable, Sendable, Hashable, Identifiable {
        var id: String
        var desk: String
        enum CodingKeys: String, CodingKey {
            case id
            case desk = "section_name"
        }
    }

    static let byDay = StoreIndex(\Story.day)
    static let byDesk = StoreIndex(\Story.desk)
    static let byTag = StoreIndex(\Story.tags)
    static let stories = StoreCollection<Story>(name: "stories", indexes: [byDay, byDesk, byTag])
    static let renamedByDesk = StoreIndex(\Renamed.desk)
    static let renamed = StoreCollection<Renamed>(name: "renamed", indexes: [renamedByDesk])

    @Test func upsertsMoveEveryKeyPathIndexEntry() async throws {
        let base = Date(timeIntervalSince1970: 1_600_000_000)
        try await Store.withTemporary(schema: StoreSchema(Self.stories)) { store in
            let first = (0..<40).map {
                Story(id: "s\($0)", day: base.addingTimeInterval(Double($0) * 60), desk: $0 % 2 == 0 ? "A" : nil, tags: ["t\($0 % 3)"])
            }
            _ = try await store.bulkInsert(first, into: Self.stories)
            // Every second story moves: a new day, the desk set or cleared, other tags.
            for i in stride(from: 0, to: 40, by: 2) {
                let moved = Story(id: "s\(i)", day: base.addingTimeInterval(-Double(i) * 3_600), desk: i % 4 == 0 ? nil : "B", tags: ["u", "t\(i % 3)"])
                try await store.put(moved, in: Self.stories)
            }
            try await store.write { txn in
                for i in stride(from: 1, to: 40, by: 4) {
                    try txn.put(Story(id: "s\(i)", day: base, desk: "C", tags: []), in: Self.stories)
                }
            }
            let expected = try store.read { snap in try snap.values(of: Self.stories) }
            try store.read { snap in
                for (index, keys) in [(Self.byDesk, { (s: Story) in s.desk.map { [StoreKey.string($0)] } ?? [] }),
                                      (Self.byTag, { (s: Story) in s.tags.map { StoreKey.string($0) } })]
                {
                    for key in Set(expected.flatMap(keys)) {
                        let found = Set(try snap.keys(in: index, of: Self.stories, range: .exactly(key)))
                        let wanted = Set(expected.filter { keys($0).contains(key) }.map { StoreKey.string($0.id) })
                        #expect(found == wanted, "index \(index.name), key \(key)")
                    }
                }
                let byDay = try snap.values(in: Self.byDay, of: Self.stories).map(\.day)
                #expect(byDay == expected.map(\.day).sorted())
                #expect(try snap.keys(in: Self.byDesk, of: Self.stories).count == expected.filter { $0.desk != nil }.count)
            }
            let report = try store.verify()
            #expect(report.isSound, "\(report.problems)")
        }
    }

    @Test func aRenamedFieldStillMovesItsIndexEntries() async throws {
        try await Store.withTemporary(schema: StoreSchema(Self.renamed)) { store in
            try await store.write { txn in
                for i in 0..<10 { try txn.put(Renamed(id: "r\(i)", desk: "old"), in: Self.renamed) }
            }
            try await store.write { txn in
                for i in 0..<10 { try txn.put(Renamed(id: "r\(i)", desk: i < 5 ? "new" : "old"), in: Self.renamed) }
            }
            try store.read { snap throws in
                #expect(try snap.keys(in: Self.renamedByDesk, of: Self.renamed, range: .exactly(.string("new"))).count == 5)
                #expect(try snap.keys(in: Self.renamedByDesk, of: Self.renamed, range: .exactly(.string("old"))).count == 5)
                #expect(try snap.keys(in: Self.renamedByDesk, of: Self.renamed).count == 10)
            }
        }
    }

    /// A section whose index keys are its name lower-cased: stored as the name, indexed otherwise.
    struct Desk: Codable, Sendable, Hashable, StoreIndexable {
        var name: String
        init(_ name: String) { self.name = name }
        init(from decoder: any Decoder) throws { name = try decoder.singleValueContainer().decode(String.self) }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(name)
        }
        static var indexKind: IndexKind { .string }
        var indexKeys: [StoreKey] { [.string(name.lowercased())] }
    }

    struct Filed: Codable, Sendable, Hashable, Identifiable {
        struct Meta: Codable, Sendable, Hashable { var tag: String }
        var id: String
        var desk: Desk
        var tag: String
        var meta: Meta
    }

    static let byFiledDesk = StoreIndex(\Filed.desk)
    static let byMetaTag = StoreIndex(\Filed.meta.tag)
    static let desks = StoreCollection<Filed>(name: "desks", indexes: [byFiledDesk])
    static let nested = StoreCollection<Filed>(name: "nested", indexes: [byMetaTag])

    /// The old keys of a custom `StoreIndexable` are not its stored field: they come from the
    /// decoded old value, and no stale entry is left.
    @Test func aCustomIndexableMovesItsEntries() async throws {
        #expect(Self.byFiledDesk.field == "desk")
        try await Store.withTemporary(schema: StoreSchema(Self.desks)) { store in
            try await store.put(Filed(id: "1", desk: Desk("U.S."), tag: "a", meta: .init(tag: "a")), in: Self.desks)
            try await store.write { txn in
                // The first put's field equals its keys ("world"), as a sample check would see.
                try txn.put(Filed(id: "2", desk: Desk("world"), tag: "x", meta: .init(tag: "x")), in: Self.desks)
                try txn.put(Filed(id: "1", desk: Desk("world"), tag: "a", meta: .init(tag: "a")), in: Self.desks)
            }
            try store.read { snap throws in
                #expect(try snap.keys(in: Self.byFiledDesk, of: Self.desks, range: .exactly(.string("u.s."))).isEmpty)
                #expect(try snap.keys(in: Self.byFiledDesk, of: Self.desks, range: .exactly(.string("world"))).count == 2)
            }
        }
    }

    /// A nested key path is named by its last property, but its field is not the top-level
    /// one of that name: its old keys come from the decoded value too.
    @Test func aNestedKeyPathMovesItsEntries() async throws {
        #expect(Self.byMetaTag.name == "tag" && Self.byMetaTag.field == nil)
        #expect(StoreIndex(\Filed.meta.tag, name: "metaTag").name == "metaTag")
        try await Store.withTemporary(schema: StoreSchema(Self.nested)) { store in
            try await store.put(Filed(id: "1", desk: Desk("d"), tag: "a", meta: .init(tag: "old")), in: Self.nested)
            // The new value's top-level `tag` equals its keys, as a sample check would see.
            try await store.put(Filed(id: "1", desk: Desk("d"), tag: "new", meta: .init(tag: "new")), in: Self.nested)
            try store.read { snap throws in
                #expect(try snap.keys(in: Self.byMetaTag, of: Self.nested, range: .exactly(.string("old"))).isEmpty)
                #expect(try snap.keys(in: Self.byMetaTag, of: Self.nested).count == 1)
            }
            let report = try store.verify()
            #expect(report.isSound, "\(report.problems)")
        }
    }
}
