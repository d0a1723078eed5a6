internal import CLMDB

/// Flags for opening a named database.
package struct DatabaseFlags: OptionSet, Sendable, Hashable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Creates the database if it does not exist. The corresponding C flag is `MDB_CREATE`.
    package static let create = DatabaseFlags(rawValue: UInt32(MDB_CREATE))
    /// Keeps several sorted values per key. The corresponding C flag is `MDB_DUPSORT`.
    package static let duplicateSort = DatabaseFlags(rawValue: UInt32(MDB_DUPSORT))
    /// With `duplicateSort`: all values of a key have one size. The corresponding C flag is `MDB_DUPFIXED`.
    package static let duplicateFixed = DatabaseFlags(rawValue: UInt32(MDB_DUPFIXED))
}

/// Flags for a put.
package struct WriteFlags: OptionSet, Sendable, Hashable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Fails (returning false) instead of replacing an existing key. The corresponding C flag is `MDB_NOOVERWRITE`.
    package static let noOverwrite = WriteFlags(rawValue: UInt32(MDB_NOOVERWRITE))
    /// In a `duplicateSort` database, skips an existing key/value pair. The corresponding C flag is `MDB_NODUPDATA`.
    package static let noDuplicateData = WriteFlags(rawValue: UInt32(MDB_NODUPDATA))
    /// Appends a key greater than every existing key, without searching (fast bulk loads).
    /// Fails with `MDB_KEYEXIST` when the key is not greater. The corresponding C flag is `MDB_APPEND`.
    package static let append = WriteFlags(rawValue: UInt32(MDB_APPEND))
    /// `append` for duplicate values. The corresponding C flag is `MDB_APPENDDUP`.
    package static let appendDuplicate = WriteFlags(rawValue: UInt32(MDB_APPENDDUP))
}

/// A named database (or the main one) inside an environment.
///
/// The handle is valid for the life of its environment; get it once from
/// `Environment.openDatabase(_:flags:)` and share it freely.
package struct Database: Sendable, Hashable {
    let dbi: MDB_dbi
    /// The database name; nil for the main database.
    package let name: String?
    /// The flags it was opened with (without `create`).
    package let flags: DatabaseFlags
}

/// Statistics of one database. The corresponding C type is `MDB_stat`.
package struct DatabaseStatistics: Sendable, Hashable {
    /// The page size in bytes.
    package var pageSize: Int
    /// The depth of the B-tree.
    package var depth: Int
    package var branchPages: Int
    package var leafPages: Int
    package var overflowPages: Int
    /// The number of key/value pairs.
    package var entries: Int
    /// Bytes in pages of this database.
    package var bytes: Int { (branchPages + leafPages + overflowPages) * pageSize }
}

/// Statistics of the environment. The corresponding C type is `MDB_envinfo`.
package struct EnvironmentInfo: Sendable, Hashable {
    /// The current map size in bytes.
    package var mapSize: Int
    /// The page size in bytes.
    package var pageSize: Int
    /// The last page number used.
    package var lastPageNumber: Int
    /// The id of the last committed transaction.
    package var lastTransactionID: Int
    /// The size of the reader table.
    package var maxReaders: Int
    /// Reader slots taken (by active or recycled read transactions of all processes).
    package var readerSlotsUsed: Int
    /// Readers of all processes that hold a snapshot now.
    package var activeReaders: Int
    /// Bytes of the map in use.
    package var usedBytes: Int { (lastPageNumber + 1) * pageSize }
}
