internal import CLMDB

extension DatabaseFlags {
    /// Keys compare as strings read back to front. The corresponding C flag is `MDB_REVERSEKEY`.
    package static let reverseKey = DatabaseFlags(rawValue: UInt32(MDB_REVERSEKEY))
    /// Keys are native unsigned integers of one size. The corresponding C flag is `MDB_INTEGERKEY`.
    package static let integerKey = DatabaseFlags(rawValue: UInt32(MDB_INTEGERKEY))
    /// With `duplicateFixed`: values are native integers. The corresponding C flag is `MDB_INTEGERDUP`.
    package static let integerDuplicate = DatabaseFlags(rawValue: UInt32(MDB_INTEGERDUP))
    /// With `duplicateSort`: values compare back to front. The corresponding C flag is `MDB_REVERSEDUP`.
    package static let reverseDuplicate = DatabaseFlags(rawValue: UInt32(MDB_REVERSEDUP))
}

extension ReadableTransaction where Self: ~Copyable {
    /// The flags the database was created with, as stored in the environment.
    ///
    /// Unlike `Database.flags` (the flags it was opened with here), this tells whether a
    /// database opened with `[]` is in fact `duplicateSort`. The corresponding C function is
    /// `mdb_dbi_flags`.
    package func flags(of database: Database) throws(LMDBError) -> DatabaseFlags {
        raw.checkLive()
        var flags: UInt32 = 0
        try raw.check(mdb_dbi_flags(raw.txn, database.dbi, &flags), "mdb_dbi_flags")
        return DatabaseFlags(rawValue: flags)
    }
}
