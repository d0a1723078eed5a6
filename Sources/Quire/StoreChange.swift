import Synchronization

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
    public let kind: Kind
    /// The identification keys (or relation owners) concerned.
    public let keys: [StoreKey]
}

/// Fans committed changes out to every `Store.changes()` subscriber.
final class ChangeHub: Sendable {
    private let subscribers = Locked<[Int: AsyncStream<[StoreChange]>.Continuation]>([:])
    private let nextID = Atomic<Int>(0)

    func subscribe() -> AsyncStream<[StoreChange]> {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream<[StoreChange]>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    var hasSubscribers: Bool { subscribers.withLock { !$0.isEmpty } }

    func publish(_ changes: [StoreChange]) {
        guard !changes.isEmpty else { return }
        let targets = subscribers.withLock { Array($0.values) }
        for continuation in targets { continuation.yield(changes) }
    }

    func finish() {
        let targets = subscribers.withLock { list in
            defer { list.removeAll() }
            return Array(list.values)
        }
        for continuation in targets { continuation.finish() }
    }
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

    var changes: [StoreChange] {
        order.compactMap { slot in keys[slot].map { StoreChange(collection: $0.1, kind: $0.0, keys: $0.2) } }
    }
}
