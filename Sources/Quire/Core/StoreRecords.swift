import QuireCodec
internal import QuireLMDB

/// The records of a collection whose keys are in a range, in key order (or reverse), decoded
/// one at a time as a `for … in` loop asks for them. Made by
/// ``StoreReading/records(in:range:reverse:)``.
///
/// Each element is a `Result`: `try record.get()` gives the key and the value, or the
/// ``StoreError`` that stopped the walk (a record that does not decode, a damaged page), which
/// is then its last element. The sequence is valid only inside the `read` or `write` that made
/// it (it walks that transaction's pages): iterating it later traps, and it cannot be sent to
/// another thread.
public struct StoreRecords<V: Codable & Sendable>: Sequence {
    let collection: StoreCollection<V>
    let range: StoreKeyRange
    let reverse: Bool
    let view: LentView

    init<View: StoreReading & ~Copyable>(
        collection: StoreCollection<V>, range: StoreKeyRange, reverse: Bool, view: borrowing View
    ) {
        self.collection = collection
        self.range = range
        self.reverse = reverse
        self.view = LentView(_context: view._context)
    }

    public func makeIterator() -> Iterator { Iterator(self) }

    /// Walks the collection's records; see ``StoreRecords``.
    public struct Iterator: IteratorProtocol {
        public typealias Element = Result<(key: StoreKey, value: V), StoreError>

        private let records: StoreRecords
        private var entries: EntrySequence.Iterator?
        private var resolved: RegisteredCollection?
        private var filter: KeyRange?
        private var table: FieldTable?  // fetched once for the walk, not per record
        private var finished = false

        init(_ records: StoreRecords) { self.records = records }

        public mutating func next() -> Element? {
            guard !finished else { return nil }
            do {
                if let value = try step() { return .success(value) }
                finished = true
                try records.view.checkIntact()  // a walk cut short by a damaged page ends in its error
                return nil
            } catch {
                finished = true
                return .failure(StoreError.wrap(error, "\(records.view.store.path): reading '\(records.collection.name)'"))
            }
        }

        private mutating func step() throws -> (key: StoreKey, value: V)? {
            let view = records.view
            if entries == nil {
                let c = try view.store.resolved(for: records.collection)
                let (physical, filter) = LongKeys.physicalRange(records.range.lmdb)
                resolved = c
                self.filter = filter
                entries = view.entries(in: c.records, range: physical, reverse: records.reverse).makeIterator()
            }
            guard let c = resolved else { return nil }
            while let entry = entries?.next() {
                let key = try view.logicalKey(entry.key)
                if let filter, !LongKeys.contains(key.bytes, in: filter) { continue }
                let collection = records.collection
                let value = try LentView.naming(collection, key) {
                    try view.withFieldRetry(&table) { table in try collection.coder.decode(entry.value, c.decoder, table) }
                }
                return (key, value)
            }
            return nil
        }
    }
}

@available(*, unavailable)
extension StoreRecords: Sendable {}

/// A copy of a view's handles, for sequences that walk the view's transaction after the call
/// that made them returned (the LMDB layer traps if that outlives the transaction).
struct LentView: StoreReading {
    let _context: StoreViewContext
}
