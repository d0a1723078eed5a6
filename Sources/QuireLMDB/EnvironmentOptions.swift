#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How an environment is opened.
package struct EnvironmentOptions: Sendable, Hashable {
    /// How much a commit waits for the disk.
    package enum Durability: Sendable, Hashable {
        /// Every commit is flushed to disk before it returns (LMDB's default).
        case durable
        /// Data is flushed, the meta page is not: a crash may lose the last commit but never
        /// corrupts. The corresponding C flag is `MDB_NOMETASYNC`.
        case noMetaSync
        /// Nothing is flushed at commit; call `Environment.sync()` to make data durable. A system
        /// crash may lose recent commits, or damage the file on file systems that reorder
        /// writes; a process crash loses nothing. The corresponding C flag is `MDB_NOSYNC`.
        case relaxed
    }

    /// The initial map size in bytes. The map grows by itself when it fills.
    package var mapSize: Int = 64 << 20
    /// The largest map the environment may grow to.
    package var maxMapSize: Int = 1 << 40
    /// The number of named databases the environment can hold (1 … 32,767).
    package var maxDatabases: Int = 32
    /// The size of the reader table (concurrent read transactions across processes; 1 … 65,536:
    /// the lock file holds 64 bytes a slot, reserved on disk when it is made).
    package var maxReaders: Int = 510
    /// Opens the environment read-only (no writes; adopts map growth by other processes).
    package var readOnly: Bool = false
    /// The durability of commits.
    package var durability: Durability = .durable
    /// Creates the directory when it does not exist (ignored when read-only).
    package var createDirectory: Bool = true
    /// The permission bits of files LMDB creates; private to the owner by default.
    package var fileMode: mode_t = 0o600

    /// The default options: a 64 MiB map that grows, durable commits, private files.
    package init() {}

    /// The most reader slots an environment may be opened with.
    package static let readerLimit = 1 << 16
    /// The most named databases an environment may be opened with.
    package static let databaseLimit = (1 << 15) - 1

    /// Throws `EINVAL`, naming the option, for values LMDB cannot take or that would make the
    /// lock file fill a disk (a reader table of `Int.max` slots).
    func validate(path: String) throws(LMDBError) {
        func invalid(_ hint: String) -> LMDBError { LMDBError(code: EINVAL, operation: "open", path: path, hint: hint) }
        guard (1...Self.readerLimit).contains(maxReaders) else {
            throw invalid("maxReaders is \(maxReaders); it must be 1…\(Self.readerLimit)")
        }
        guard (1...Self.databaseLimit).contains(maxDatabases) else {
            throw invalid("maxDatabases is \(maxDatabases); it must be 1…\(Self.databaseLimit)")
        }
        guard mapSize >= 0, maxMapSize >= 0 else { throw invalid("map sizes cannot be negative") }
    }
}
