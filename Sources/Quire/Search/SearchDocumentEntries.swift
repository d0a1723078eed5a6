internal import QuireLMDB

/// A document's `s:<c>:doc` entry: its number and, in the oldest stores, its distinct terms.
typealias SearchDocumentEntry = (number: UInt32, terms: [[UInt8]]?)

/// The `s:<c>:doc` entries, physical record key → document number, in either of their layouts
/// (``SearchState/hashedDocuments`` says which):
///
/// - hashed (indexes created now): keyed by an 8-byte hash of the physical key
///   (``hash(_:)``), the value the document's number, or the numbers of every document whose
///   key has that hash (big-endian `UInt32`s, ascending); the number's `num` entry holds the
///   key, which tells colliding documents apart. 22 bytes an entry instead of the key's length
///   plus 14 (51 for an NYT article id);
/// - keyed by the physical key (indexes created before), the value the number and, in the
///   oldest stores, the document's distinct terms.
struct SearchDocumentEntries {
    let dbs: SearchDatabases
    let state: SearchState
    /// ``hash(_:)`` but in tests, which make keys collide.
    private let hashOf: ([UInt8]) -> [UInt8]

    init(_ dbs: SearchDatabases, _ state: SearchState, hash: @escaping ([UInt8]) -> [UInt8] = Self.hash) {
        self.dbs = dbs
        self.state = state
        self.hashOf = hash
    }

    /// FNV-1a over the key's bytes, then a final avalanche, big-endian: fixed by the format.
    static func hash(_ key: UnsafeRawBufferPointer) -> [UInt8] {
        withUnsafeBytes(of: hashValue(key).bigEndian) { Array($0) }
    }

    /// ``hash(_:)`` as a number.
    static func hashValue(_ key: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in key { h = (h ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        h ^= h >> 33
        h = h &* 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        return h
    }

    static func hash(_ key: [UInt8]) -> [UInt8] { key.withUnsafeBytes { hash($0) } }

    /// The numbers of a hashed entry's value.
    static func numbers(_ bytes: UnsafeRawBufferPointer) throws -> [UInt32] {
        guard !bytes.isEmpty, bytes.count % 4 == 0 else {
            throw StoreError(.corrupted, "search index: a document entry of \(bytes.count) bytes")
        }
        return stride(from: 0, to: bytes.count, by: 4).map { SearchDatabases.number(bytes, at: $0)! }
    }

    /// The document number of the physical `key` and, for the oldest entries, its listed terms;
    /// nil when it is not indexed. With `indexed` (the key is known to be indexed: it comes
    /// from the collection's records or their indexes, and every record is indexed), a hash
    /// that names one document needs no check of its key.
    func entry<T: ReadableTransaction & ~Copyable>(of key: [UInt8], indexed: Bool = false, _ txn: borrowing T) throws
        -> SearchDocumentEntry?
    {
        guard state.hashedDocuments else {
            return try txn.withValue(forKey: key, in: dbs.documents) { try SearchDatabases.documentEntry($0) }
        }
        guard let numbers = try txn.withValue(forKey: hashOf(key), in: dbs.documents, { try Self.numbers($0) }) else {
            return nil
        }
        if indexed && numbers.count == 1 { return (numbers[0], nil) }
        for number in numbers where try self.key(of: number, txn) == key { return (number, nil) }
        return nil
    }

    /// The physical key of document `number`, from its `num` entry.
    func key<T: ReadableTransaction & ~Copyable>(of number: UInt32, _ txn: borrowing T) throws -> [UInt8]? {
        var numberKey = [UInt8]()
        SearchDatabases.appendNumber(number, to: &numberKey)
        return try txn.withValue(forKey: numberKey, in: dbs.numbers) { bytes in
            Array(bytes[try state.keyOffset(inNumberEntry: bytes)...])
        }
    }

    /// Records that the physical `key` is document `number` (`appending`: the key is past
    /// every stored one, for the layout keyed by it).
    func put<T: WritableTransaction & ~Copyable>(_ key: [UInt8], _ number: UInt32, appending: Bool, _ txn: borrowing T)
        throws
    {
        var value = [UInt8]()
        guard state.hashedDocuments else {
            SearchDatabases.appendNumber(number, to: &value)
            try txn.put(value, forKey: key, in: dbs.documents, flags: appending ? .append : [])
            return
        }
        let hash = hashOf(key)
        var numbers = try txn.withValue(forKey: hash, in: dbs.documents) { try Self.numbers($0) } ?? []
        guard !numbers.contains(number) else { return }
        numbers.append(number)
        numbers.sort()
        for n in numbers { SearchDatabases.appendNumber(n, to: &value) }
        try txn.put(value, forKey: hash, in: dbs.documents)
    }

    /// Removes the entry of the physical `key`, document `number`.
    func remove<T: WritableTransaction & ~Copyable>(_ key: [UInt8], _ number: UInt32, _ txn: borrowing T) throws {
        guard state.hashedDocuments else {
            try txn.delete(key, in: dbs.documents)
            return
        }
        let hash = hashOf(key)
        let numbers = try txn.withValue(forKey: hash, in: dbs.documents) { try Self.numbers($0) } ?? []
        let kept = numbers.filter { $0 != number }
        if kept.isEmpty {
            try txn.delete(hash, in: dbs.documents)
        } else {
            var value = [UInt8]()
            for n in kept { SearchDatabases.appendNumber(n, to: &value) }
            try txn.put(value, forKey: hash, in: dbs.documents)
        }
    }
}
