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

/// Collects the changes of one transaction, merged per collection and kind.
struct ChangeLog {
    private var order: [String] = []
    private var keys: [String: (StoreChange.Kind, String, [StoreKey])] = [:]

    mutating func record(_ collection: String, _ kind: StoreChange.Kind, _ key: StoreKey) {
        let slot = "\(kind):\(collection)"
        if keys[slot] == nil {
            order.append(slot)
            keys[slot] = (kind, collection, [])
        }
        keys[slot]!.2.append(key)
    }

    var isEmpty: Bool { order.isEmpty }

    var changes: [StoreChange] {
        order.compactMap { slot in keys[slot].map { StoreChange(collection: $0.1, kind: $0.0, keys: $0.2) } }
    }
}
