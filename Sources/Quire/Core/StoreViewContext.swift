import QuireCodec
internal import QuireLMDB

/// The LMDB transaction under a store view (a ``Snapshot`` or a ``StoreTransaction``).
///
/// Opaque on purpose: it has no public members, so no program outside Quire can read raw pages or
/// write past the store's indexes, relations and field table through it.
public struct StoreViewContext {
    /// The store whose transaction `raw` is: kept here, not taken from the view's conformer, so
    /// that a view can never pair one store's database handles with another's transaction.
    let store: Store
    let raw: TransactionHandle
    /// The write transaction's state; nil for snapshots.
    let writeState: WriteState?
}

@available(*, unavailable)
extension StoreViewContext: Sendable {}

extension StoreViewContext: CustomReflectable {
    /// No children: reflection must not hand out the store (its writes) or the transaction.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// The raw LMDB operations of a store view, for Quire's own code only.
struct RawView: WritableTransaction {
    let raw: TransactionHandle
}

extension StoreReading where Self: ~Copyable {
    /// The raw transaction, for Quire's own reads and writes.
    var lmdb: RawView { RawView(raw: _context.raw) }

    /// The field table a write transaction encodes with, including names it added but has not
    /// committed yet; nil for snapshots (they read with the store's table).
    var writingFields: FieldTable? { _context.writeState?.fields }

    func withValue<R>(forKey key: [UInt8], in database: Database, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try lmdb.withValue(forKey: key, in: database, body)
    }

    func withValue<R>(
        forKey key: UnsafeRawBufferPointer, in database: Database, _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        try lmdb.withValue(forKey: key, in: database, body)
    }

    func get(_ key: [UInt8], in database: Database) throws(LMDBError) -> [UInt8]? {
        try lmdb.get(key, in: database)
    }

    func contains(_ key: [UInt8], in database: Database) throws(LMDBError) -> Bool {
        try lmdb.contains(key, in: database)
    }

    func statistics(of database: Database) throws(LMDBError) -> DatabaseStatistics {
        try lmdb.statistics(of: database)
    }

    func contains(_ key: [UInt8], value: [UInt8], in database: Database) throws(LMDBError) -> Bool {
        try lmdb.contains(key, value: value, in: database)
    }

    func count(of database: Database) throws(LMDBError) -> Int {
        try lmdb.count(of: database)
    }

    func entries(in database: Database, range: KeyRange = .all, reverse: Bool = false) -> EntrySequence {
        lmdb.entries(in: database, range: range, reverse: reverse)
    }

    func duplicates(of key: [UInt8], in database: Database) -> EntrySequence {
        lmdb.duplicates(of: key, in: database)
    }

    func cursor(in database: Database) throws(LMDBError) -> Cursor {
        try lmdb.cursor(in: database)
    }

    /// Throws the LMDB error a sequence met on a damaged page (sequences end early instead).
    func checkIntact() throws(LMDBError) {
        try lmdb.checkIntact()
    }
}

extension StoreReading where Self: ~Copyable {
    /// The id of the last commit this view sees (a write transaction's is one more): the state
    /// an answer made from it reflects, which the meta page's id may be ahead of for a moment
    /// (LMDB writes the meta page before it lets new snapshots see it).
    package var transactionID: Int { lmdb.id }
}
