internal import QuireLMDB

/// How a store is opened.
public struct StoreOptions: Sendable {
    /// How durable a commit is when it returns.
    public enum Durability: Sendable, Hashable {
        /// Every commit is on disk before it returns (the default).
        case durable
        /// Data is flushed, the meta page is not: a system crash may lose the last commit, never
        /// corrupts. The corresponding LMDB flag is `MDB_NOMETASYNC`.
        case noMetaSync
        /// Nothing is flushed at commit: a system crash may lose recent commits (and damage the
        /// file on file systems that reorder writes); a process crash loses nothing. The
        /// corresponding LMDB flag is `MDB_NOSYNC`.
        case relaxed

        var lmdb: EnvironmentOptions.Durability {
            switch self {
            case .durable: .durable
            case .noMetaSync: .noMetaSync
            case .relaxed: .relaxed
            }
        }
    }

    /// The initial map size in bytes; the map grows by itself.
    public var initialMapSize: Int = 64 << 20
    /// The durability of commits (group commits resume callers only once durable in `.durable`).
    public var durability: Durability = .durable
    /// The size of LMDB's reader table: 1 … 65,536 (the store's open throws otherwise).
    public var maxReaders: Int = 510
    /// Open read-only: no writes, works while another process writes.
    public var readOnly: Bool = false
    /// How many commits the durable change feed keeps (``Store/changes(since:)``); older ones are
    /// trimmed, and a subscriber that had not read them gets a gap. 0 turns the feed off.
    public var changeRetention: Int = 100_000
    /// The most bytes the change feed keeps: older commits past it are trimmed too (a
    /// subscriber that had not read them gets a gap), the newest always kept. A bulk load's
    /// commits list every key they wrote (38 MB for a million articles), so the count alone
    /// would let the feed grow with the store. 0: no bound but the count.
    public var changeRetentionBytes: Int = 64 << 20
    /// The most collections, indexes and relations the store can hold in all: 1 … 32,767 (the
    /// store's open throws otherwise).
    public var maxDatabases: Int = 128
    /// Checks every record's CRC-32C as it is read, so a damaged record throws
    /// (`CompactDecodingError.checksumMismatch`) instead of reading as other data. Off by
    /// default (a read then costs nothing more); `verify()` always checks. The CLI turns it on.
    public var verifyChecksums: Bool = false

    /// How many records a compressed collection must hold before the store trains its zstd
    /// dictionary by itself (after the commit that reached it, or before the first chunk of a
    /// bulk load that reaches it, from the load's values); 0 leaves training to
    /// ``Store/trainCompressionDictionary(for:sampleSize:capacity:)``. Records written before
    /// stay readable; `copy --compact` (``Store/backup(to:compact:isCancelled:)``) rewrites them
    /// with the dictionary.
    public var dictionaryTrainingThreshold: Int = 1_000

    /// The most postings (a word's documents) one search may hold while it ranks: about 28 bytes
    /// each for the articles' index, so the default of 2^25 keeps a query under 1 GiB. A query
    /// whose words match more throws ``SearchError`` (``SearchError/Kind/tooBroad``) instead of
    /// taking the machine's memory: sixty common words joined by OR in ten million articles.
    public var searchPostingLimit: Int = 1 << 25

    /// Replaces the long-key hash (tests use it to force collisions); nil for the store's own.
    var longKeyDigest: (@Sendable ([UInt8]) -> [UInt8])?

    /// The defaults: a 64 MiB map that grows, durable commits.
    public init() {}

    var environmentOptions: EnvironmentOptions {
        var o = EnvironmentOptions()
        o.mapSize = initialMapSize
        o.durability = durability.lmdb
        o.maxReaders = maxReaders
        o.readOnly = readOnly
        o.maxDatabases = maxDatabases
        return o
    }
}
