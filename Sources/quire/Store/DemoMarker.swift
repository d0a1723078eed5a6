import Foundation
import Quire

/// Keeps the demo's generated articles out of real stores: the demo writes only into an empty
/// store, which it marks, or into one it marked before.
enum DemoMarker {
    /// The marker's record.
    struct Mark: Codable, Sendable {
        var id: String
        var createdAt: Date
    }

    static let collection = StoreCollection<Mark>(name: "demo", key: { .string($0.id) })

    /// Marks `store` as a demo store, or refuses when it holds anything the demo did not write.
    static func claim(_ store: Store) async throws {
        let stored = try store.storedCollections()
        if stored.contains(where: { $0.name == collection.name }) { return }
        for definition in stored where try store.read({ try $0.count(ofCollectionNamed: definition.name) }) > 0 {
            throw RuntimeError(
                "demo",
                "\(store.path): the store holds '\(definition.name)' records that the demo did not write; "
                    + "the demo only writes into an empty store or an earlier demo's (use --store with a new directory)")
        }
        try store.register(collection)
        try await store.write { txn in try txn.put(Mark(id: "demo", createdAt: Date()), in: collection) }
    }
}
