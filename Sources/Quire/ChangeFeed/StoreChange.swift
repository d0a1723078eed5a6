/// What one commit changed in one collection or relation.
public struct StoreChange: Sendable, Hashable {
    /// The kind of change.
    public enum Kind: Sendable, Hashable {
        /// Values were inserted or replaced.
        case upsert
        /// Values were deleted.
        case delete
        /// The members of relation owners changed (`keys` are the owners).
        case relation
    }

    /// The collection (or relation) name.
    public let collection: String
    /// The kind of change.
    public let kind: Kind
    /// The identification keys (or relation owners) concerned.
    public let keys: [StoreKey]
}

/// Collects the changes of one transaction, merged per collection and kind (in first-seen order).
struct ChangeLog {
    private var entries: [(kind: StoreChange.Kind, collection: String, keys: [StoreKey])] = []

    /// The entry for `collection` and `kind`: usually the last one (writes come in runs).
    private mutating func slot(_ collection: String, _ kind: StoreChange.Kind) -> Int {
        if let last = entries.indices.last, entries[last].kind == kind, entries[last].collection == collection { return last }
        if let found = entries.firstIndex(where: { $0.kind == kind && $0.collection == collection }) { return found }
        entries.append((kind, collection, []))
        return entries.count - 1
    }

    /// The collections (and relations) changed, each once.
    var collections: [String] {
        var seen = Set<String>()
        return entries.compactMap { seen.insert($0.collection).inserted ? $0.collection : nil }
    }

    mutating func record(_ collection: String, _ kind: StoreChange.Kind, _ key: StoreKey) {
        entries[slot(collection, kind)].keys.append(key)
    }

    /// A bulk chunk's keys at once.
    mutating func record(_ collection: String, _ kind: StoreChange.Kind, keys: [StoreKey]) {
        let i = slot(collection, kind)
        entries[i].keys.reserveCapacity(entries[i].keys.count + keys.count)
        entries[i].keys += keys
    }

    var isEmpty: Bool { entries.isEmpty }

    var changes: [StoreChange] { entries.map { StoreChange(collection: $0.collection, kind: $0.kind, keys: $0.keys) } }
}
