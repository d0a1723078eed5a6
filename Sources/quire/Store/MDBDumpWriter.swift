import QuireCodec
import QuireLMDB

/// Writes every named database of `environment` to `output` in the text format of
/// `mdb_dump -a` (lmdb-utils 0.9.x, hex mode), byte for byte, so `mdb_load` restores it.
///
/// Open the environment with ``ReadOnlyStore/open(_:command:)`` (read-only, map size taken from
/// the file) to get the same `mapsize=` header as `mdb_dump`. Polls Ctrl-C between entries.
/// The records of `collections` (a Quire store's, as its `_meta` names them) are checked as
/// they are copied; any other database is copied as bytes, as `mdb_dump` would.
/// - Throws: `LMDBError`, ``OutputError``, ``InterruptedError`` (command `dump`).
func writeMDBDump(environment: Environment, to output: OutputWriter, collections: [String] = []) throws {
    let names = Set(collections.map { "c:" + $0 })
    try MDBDumpWriter(environment: environment, output: output, recordDatabases: names).write()
}

/// The `mdb_dump` text format: per database a header (`VERSION=3` … `HEADER=END`), then each
/// key and value on its own line as a space and lowercase hex, then `DATA=END`.
struct MDBDumpWriter {
    let environment: Environment
    let output: OutputWriter
    /// The databases holding a collection's records (`c:` and its name).
    var recordDatabases: Set<String> = []
    /// Checked every few thousand entries; true stops the dump with ``InterruptedError``.
    var isInterrupted: () -> Bool = { InterruptFlag.isRaised }

    /// The header lines `mdb_dump` prints for these flags, in its order (mdb_dump.c `dbflags`).
    private static let flagNames: [(DatabaseFlags, String)] = [
        (.reverseKey, "reversekey"), (.duplicateSort, "dupsort"), (.integerKey, "integerkey"),
        (.duplicateFixed, "dupfixed"), (.integerDuplicate, "integerdup"), (.reverseDuplicate, "reversedup"),
    ]
    private static let hexDigits = Array("0123456789abcdef".utf8)
    private static let interruptCheckInterval = 4096

    /// Dumps every named database, in the order of their names, from one snapshot.
    func write() throws {
        let databases = try namedDatabases()
        let info = try environment.info()  // outside the read: it waits for the map like a reader
        try environment.read { txn in
            for database in databases {
                try dump(database, info: info, txn)
            }
        }
    }

    /// The main database's keys that name databases, opened.
    ///
    /// Like `mdb_dump -a`: keys holding a NUL byte are skipped, and so are keys that are plain
    /// data rather than databases (LMDB answers `MDB_INCOMPATIBLE`). Names that are not UTF-8
    /// are skipped too, since a database is opened by a Swift string.
    private func namedDatabases() throws -> [Database] {
        let main = try environment.openDatabase(nil, flags: [])
        let names = try environment.read { txn -> [String] in
            var names: [String] = []
            let cursor = try txn.cursor(in: main)
            var entry = try cursor.first()
            while let current = entry {
                if !current.key.contains(0), let name = String(validating: current.key, as: UTF8.self) {
                    names.append(name)
                }
                entry = try cursor.nextKey()
            }
            return names
        }
        var databases: [Database] = []
        for name in names {
            do {
                databases.append(try environment.openDatabase(name, flags: []))
            } catch {
                // Plain data in the main database, or a database dropped since the names were read.
                if error == .incompatible || error == .notFound { continue }
                throw error
            }
        }
        return databases
    }

    private func dump(_ database: Database, info: EnvironmentInfo, _ txn: borrowing ReadTransaction) throws {
        let flags = try txn.flags(of: database)
        let statistics = try txn.statistics(of: database)
        var header = "VERSION=3\nformat=bytevalue\n"
        if let name = database.name { header += "database=\(name)\n" }
        header += "type=btree\nmapsize=\(info.mapSize)\nmaxreaders=\(info.maxReaders)\n"
        if flags.contains(.duplicateSort) { header += "duplicates=1\n" }
        for (flag, name) in Self.flagNames where flags.contains(flag) {
            header += "\(name)=1\n"
        }
        header += "db_pagesize=\(statistics.pageSize)\nHEADER=END\n"
        try output.write(header)

        var line: [UInt8] = []
        var count = 0
        let cursor = try txn.cursor(in: database)
        var entry = try cursor.first()
        // Records are copied as bytes, but a damaged one must not be copied as if it were sound.
        let holdsRecords = database.name.map(recordDatabases.contains) == true
        while let current = entry {
            if holdsRecords { try CompactDecoder.checkIntegrity(current.value) }
            line.removeAll(keepingCapacity: true)
            Self.appendHexLine(current.key, to: &line)
            Self.appendHexLine(current.value, to: &line)
            try output.write(bytes: line)
            count += 1
            if count % Self.interruptCheckInterval == 0 && isInterrupted() {
                throw InterruptedError(command: "dump")
            }
            entry = try cursor.next()
        }
        try output.write("DATA=END\n")
    }

    /// Appends a space, the bytes as lowercase hex, and a newline (mdb_dump.c `hex`).
    static func appendHexLine(_ bytes: UnsafeRawBufferPointer, to line: inout [UInt8]) {
        line.append(UInt8(ascii: " "))
        for byte in bytes {
            line.append(hexDigits[Int(byte >> 4)])
            line.append(hexDigits[Int(byte & 0x0F)])
        }
        line.append(UInt8(ascii: "\n"))
    }
}
