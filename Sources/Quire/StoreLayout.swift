/// Names of the LMDB databases inside a store's environment (visible to `mdb_stat -a`).
///
/// - `_meta`: format version and the definitions of collections, indexes and relations;
/// - `_fields`: the codec's field table, big-endian `UInt32` id → UTF-8 name, append-only;
/// - `c:<collection>`: records, identification key → encoded value;
/// - `i:<collection>:<index>`: sorted duplicates, index key → identification key;
/// - `r:<relation>`: sorted duplicates, owner key → member key;
/// - `_longkeys`: physical (511-byte) form of a key over 510 bytes → the whole key (`LongKeys`).
enum StoreLayout {
    static let meta = "_meta"
    static let fields = "_fields"
    /// The durable change feed: big-endian `UInt64` sequence → the commit's changes.
    static let changes = "_changes"
    static let longKeys = "_longkeys"
    /// The format this library writes; stores with a higher number are refused.
    static let formatVersion = 1
    static let formatKey = Array("format".utf8)

    static func records(_ collection: String) -> String { "c:" + collection }
    static func index(_ collection: String, _ index: String) -> String { "i:\(collection):\(index)" }
    static func relation(_ name: String) -> String { "r:" + name }
    static func collectionKey(_ name: String) -> [UInt8] { Array("collection:\(name)".utf8) }
    static func relationKey(_ name: String) -> [UInt8] { Array("relation:\(name)".utf8) }
    static func dictionaryKey(_ name: String) -> [UInt8] { Array("dictionary:\(name)".utf8) }

    static func fieldKey(_ id: Int) -> [UInt8] {
        withUnsafeBytes(of: UInt32(id).bigEndian) { Array($0) }
    }
}
