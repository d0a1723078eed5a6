import QuireCodec

/// Names of the LMDB databases inside a store's environment (visible to `mdb_stat -a`).
///
/// - `_meta`: format version and the definitions of collections, indexes and relations;
/// - `_fields`: the codec's field table, big-endian `UInt32` id → UTF-8 name, append-only;
/// - `c:<collection>`: records, identification key → encoded value;
/// - `i:<collection>:<index>`: sorted duplicates, index key → identification key;
/// - `r:<relation>`: sorted duplicates, owner key → member key;
/// - `_longkeys`: physical (511-byte) form of a key over 510 bytes → the whole key (`LongKeys`).
enum StoreLayout {
    /// Whether `name` can name a collection, an index or a relation: not empty, no `:` (it
    /// separates the parts of a database's name) and no NUL (LMDB takes names as C strings, so
    /// `a\0b` would open the database of `a`).
    static func isValidName(_ name: String) -> Bool { !name.isEmpty && !name.contains(":") && !name.utf8.contains(0) }

    static let meta = "_meta"
    static let fields = "_fields"
    /// The durable change feed: big-endian `UInt64` sequence → the commit's changes.
    static let changes = "_changes"
    static let longKeys = "_longkeys"
    /// The format this library writes; stores with a higher number are refused.
    ///
    /// 2: records are codec version 2 payloads, with a CRC-32C (version 1 records, from stores of
    /// format 1, stay readable). A format 1 store opened for writing is stamped 2, since the
    /// records it gets from then on need a reader that knows version 2.
    static let formatVersion = 2
    static let formatKey = Array("format".utf8)
    /// The CRC-32C of the whole field table (each name as a 4-byte little-endian length and its
    /// UTF-8), rewritten in the transaction that appends names; checked when the table loads.
    static let fieldsChecksumKey = Array("fields-crc32c".utf8)

    /// The checksum stored under ``fieldsChecksumKey`` for `names`.
    static func fieldsChecksum(_ names: [String]) -> [UInt8] {
        var crc: UInt32 = 0
        for name in names {
            var length = UInt32(name.utf8.count).littleEndian
            crc = withUnsafeBytes(of: &length) { Checksum.crc32c($0, continuing: crc) }
            crc = Array(name.utf8).withUnsafeBytes { Checksum.crc32c($0, continuing: crc) }
        }
        return Array(String(crc, radix: 16).utf8)
    }

    static func records(_ collection: String) -> String { "c:" + collection }
    static func index(_ collection: String, _ index: String) -> String { "i:\(collection):\(index)" }
    static func relation(_ name: String) -> String { "r:" + name }
    static func collectionKey(_ name: String) -> [UInt8] { Array("collection:\(name)".utf8) }
    static func relationKey(_ name: String) -> [UInt8] { Array("relation:\(name)".utf8) }
    static func dictionaryKey(_ name: String) -> [UInt8] { Array("dictionary:\(name)".utf8) }
    /// The CRC-32C of a collection's dictionary, written with it: a record's checksum covers its
    /// compressed bytes, so a damaged dictionary would decompress them to other text unseen.
    /// (Dictionaries stored before it have none.)
    static func dictionaryChecksumKey(_ name: String) -> [UInt8] { Array("dictionary-crc32c:\(name)".utf8) }

    /// The checksum stored under ``dictionaryChecksumKey(_:)`` for `dictionary`.
    static func dictionaryChecksum(_ dictionary: [UInt8]) -> [UInt8] {
        Array(String(dictionary.withUnsafeBytes { Checksum.crc32c($0) }, radix: 16).utf8)
    }
    /// Where a backup's recompression holds a collection's records for a moment.
    static func recompressScratch(_ name: String) -> String { "_recompress:\(name)" }

    static func fieldKey(_ id: Int) -> [UInt8] {
        withUnsafeBytes(of: UInt32(id).bigEndian) { Array($0) }
    }
}
