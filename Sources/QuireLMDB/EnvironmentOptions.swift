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
    /// The number of named databases the environment can hold.
    public var maxDatabases: Int = 32
    /// The size of the reader table (concurrent read transactions across processes).
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
}
