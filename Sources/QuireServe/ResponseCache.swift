import Synchronization

/// JSON bodies of recent answers, reused while the store has not committed since.
///
/// An answer of the API is a function of the request target and the store's state, and the
/// state is named by the last committed transaction id (LMDB's, any process). Each body is
/// kept with the id read *before* its snapshot was taken, so an entry can only be served
/// while no commit happened after that look (the snapshot then saw exactly that state); the
/// first request that sees a newer id empties the cache. Bounded by bytes; when full, the
/// oldest entries go first. A web page's list, its first pages and the records it opens are
/// asked again and again; this makes them cost a hash lookup instead of a walk and a JSON
/// rendering of every record.
final class ResponseCache: Sendable {
    struct Entry: Sendable {
        var body: [UInt8]
        var tag: String
    }

    private struct State {
        var transaction = -1
        // By the target's bytes: `String` keys are equal when canonically equivalent, and a raw
        // UTF-8 target naming an id decomposed got the answer for the composed one.
        var entries: [[UInt8]: Entry] = [:]
        var order: [[UInt8]] = []
        var orderStart = 0
        var bytes = 0
    }

    private let state = Mutex(State())
    /// The most body bytes kept; 0 turns the cache off.
    let capacity: Int

    init(capacity: Int) { self.capacity = max(0, capacity) }

    /// The body kept for `key` at store transaction `transaction`, if any.
    func lookup(_ key: String, transaction: Int) -> Entry? {
        guard capacity > 0 else { return nil }
        let key = Array(key.utf8)
        return state.withLock { state in
            guard state.transaction == transaction else { return nil }
            return state.entries[key]
        }
    }

    /// Keeps `entry` for `key`, computed from a snapshot taken after `transaction` was read.
    func store(_ entry: Entry, for key: String, transaction: Int) {
        let key = Array(key.utf8)
        let size = entry.body.count + key.count
        guard capacity > 0, size <= capacity / 8 else { return }  // one answer never fills it
        state.withLock { state in
            if transaction != state.transaction {
                guard transaction > state.transaction else { return }  // computed before a newer commit
                state = State(transaction: transaction)
            }
            if let old = state.entries.updateValue(entry, forKey: key) {
                state.bytes -= old.body.count + key.count
            } else {
                state.order.append(key)
            }
            state.bytes += size
            while state.bytes > capacity, state.orderStart < state.order.count {
                let oldest = state.order[state.orderStart]
                state.orderStart += 1
                if let gone = state.entries.removeValue(forKey: oldest) { state.bytes -= gone.body.count + oldest.count }
            }
            if state.orderStart > 1024, state.orderStart * 2 > state.order.count {
                state.order.removeFirst(state.orderStart)
                state.orderStart = 0
            }
        }
    }
}
