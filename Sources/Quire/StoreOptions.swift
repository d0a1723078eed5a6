import QuireLMDB

/// How a store is opened.
public struct StoreOptions: Sendable {
    /// The initial map size in bytes; the map grows by itself.
    public var initialMapSize: Int = 64 << 20
    /// The durability of commits (group commits resume callers only once durable in `.durable`).
    public var durability: EnvironmentOptions.Durability = .durable
    /// The size of LMDB's reader table.
    public var maxReaders: Int = 510
    /// Open read-only: no writes, works while another process writes.
    public var readOnly: Bool = false
    /// The most collections, indexes and relations the store can hold in all.
    public var maxDatabases: Int = 128
    /// Checks every record's CRC-32C as it is read, so a damaged record throws
    /// (`CompactDecodingError.checksumMismatch`) instead of reading as other data. Off by
    /// default (a read then costs nothing more); `verify()` always checks. The CLI turns it on.
    public var verifyChecksums: Bool = false

    /// The defaults: a 64 MiB map that grows, durable commits.
    public init() {}

    var environmentOptions: EnvironmentOptions {
        var o = EnvironmentOptions()
        o.mapSize = initialMapSize
        o.durability = durability
        o.maxReaders = maxReaders
        o.readOnly = readOnly
        o.maxDatabases = maxDatabases
        return o
    }
}
