#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How an environment is opened.
public struct EnvironmentOptions: Sendable, Hashable {
    /// How much a commit waits for the disk.
    public enum Durability: Sendable, Hashable {
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
    public var mapSize: Int = 64 << 20
    /// The largest map the environment may grow to.
    public var maxMapSize: Int = 1 << 40
    /// The number of named databases the environment can hold (1 … 32,767).
    public var maxDatabases: Int = 32
    /// The size of the reader table (concurrent read transactions across processes; 1 … 65,536:
    /// the lock file holds 64 bytes a slot, reserved on disk when it is made).
    public var maxReaders: Int = 510
    /// Opens the environment read-only (no writes; adopts map growth by other processes).
    public var readOnly: Bool = false
    /// The durability of commits.
    public var durability: Durability = .durable
    /// Creates the directory when it does not exist (ignored when read-only).
    public var createDirectory: Bool = true
    /// The permission bits of files LMDB creates; private to the owner by default.
    public var fileMode: mode_t = 0o600

    /// The default options: a 64 MiB map that grows, durable commits, private files.
    public init() {}

    /// The most reader slots an environment may be opened with.
    public static let readerLimit = 1 << 16
    /// The most named databases an environment may be opened with.
    public static let databaseLimit = (1 << 15) - 1

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
