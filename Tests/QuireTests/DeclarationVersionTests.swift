import Foundation
import Quire
import Testing

/// A declaration's closures cannot be compared: a new `version:` says they changed, and the
/// next writable open rebuilds the index (an unchanged version keeps what is stored).
@Suite struct DeclarationVersionTests {
    struct Memo: Codable, Sendable, Hashable {
        var id: String
        var tag: String
        var title: String
        var body: String
    }

    static let memos = [
        Memo(id: "m1", tag: "Otter", title: "river bank", body: "a quiet morning"),
        Memo(id: "m2", tag: "BADGER", title: "old wood", body: "a loud evening"),
        Memo(id: "m3", tag: "otter", title: "sea cliff", body: "a quiet night"),
    ]

    /// Memos with a `tag` index computed by `keys` and a search index over `text`.
    static func collection(
        indexVersion: Int?, keys: @escaping @Sendable (Memo) -> [StoreKey],
        searchVersion: Int?, text: @escaping @Sendable (Memo) -> String
    ) -> (StoreCollection<Memo>, StoreIndex<Memo>) {
        let byTag = StoreIndex<Memo>(name: "tag", kind: .string, version: indexVersion, keys: keys)
        let collection = StoreCollection<Memo>(name: "memos", key: { .string($0.id) }, indexes: [byTag]).searchable(
            StoreSearchIndex(fields: [StoreSearchField(name: "text", id: 0, weight: 1)], version: searchVersion) {
                [SearchText(field: 0, text($0))]
            })
        return (collection, byTag)
    }

    static func tagged(_ store: Store, _ index: StoreIndex<Memo>, in memos: StoreCollection<Memo>, _ tag: String) throws
        -> Set<String>
    {
        try store.read { snap in
            Set(try snap.keys(in: index, of: memos, range: .exactly(.string(tag))).map(\.description))
        }
    }

    static func found(_ store: Store, in memos: StoreCollection<Memo>, _ query: String) throws -> Set<String> {
        try store.read { snap in Set(try snap.search(query, in: memos, limit: 10).map(\.key.description)) }
    }

    @Test func aNewVersionRebuildsTheIndexAndTheSearchIndex() async throws {
        try await withTemporaryStorePath { path in
            let (first, firstByTag) = Self.collection(
                indexVersion: nil, keys: { [.string($0.tag)] }, searchVersion: nil, text: \.body)
            do {
                let store = try Store(path: path, schema: StoreSchema(first))
                defer { store.close() }
                try await store.write { txn in for memo in Self.memos { try txn.put(memo, in: first) } }
                #expect(try Self.tagged(store, firstByTag, in: first, "otter") == ["m3"])
                #expect(try Self.found(store, in: first, "quiet") == ["m1", "m3"])
            }
            // Keys lower-cased and the title searched instead of the body, with new versions.
            let (second, secondByTag) = Self.collection(
                indexVersion: 2, keys: { [.string($0.tag.lowercased())] }, searchVersion: 2, text: \.title)
            let store = try Store(path: path, schema: StoreSchema(second))
            defer { store.close() }
            #expect(try Self.tagged(store, secondByTag, in: second, "otter") == ["m1", "m3"])
            #expect(try Self.tagged(store, secondByTag, in: second, "Otter").isEmpty)
            #expect(try Self.tagged(store, secondByTag, in: second, "badger") == ["m2"])
            #expect(try Self.found(store, in: second, "quiet").isEmpty)
            #expect(try Self.found(store, in: second, "cliff") == ["m3"])
            let report = try store.verify()
            #expect(report.isSound, "\(report.problems)")
        }
    }

    @Test func anUnchangedVersionKeepsWhatIsStored() async throws {
        try await withTemporaryStorePath { path in
            let (first, _) = Self.collection(indexVersion: 1, keys: { [.string($0.tag)] }, searchVersion: 1, text: \.body)
            do {
                let store = try Store(path: path, schema: StoreSchema(first))
                defer { store.close() }
                try await store.write { txn in for memo in Self.memos { try txn.put(memo, in: first) } }
            }
            // The same versions: no rebuild, the entries of the first declaration stay.
            let (again, againByTag) = Self.collection(
                indexVersion: 1, keys: { [.string($0.tag.lowercased())] }, searchVersion: 1, text: \.title)
            let store = try Store(path: path, schema: StoreSchema(again))
            defer { store.close() }
            #expect(try Self.tagged(store, againByTag, in: again, "Otter") == ["m1"])
            #expect(try Self.found(store, in: again, "quiet") == ["m1", "m3"])
        }
    }
}
