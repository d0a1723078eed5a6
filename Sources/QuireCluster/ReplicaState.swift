public import Quire

/// What a replica has applied, kept in its own store.
public struct ReplicaState: Codable, Sendable, Hashable {
    /// Always ``key``: one record.
    public var id: String
    /// The etcd revision of the last log entries applied; written in the same LMDB transaction
    /// as their records, so a member killed at any instant resumes after exactly this revision.
    public var appliedRevision: Int64
    /// Which log it applied: `etcd cluster <id> prefix <prefix> epoch <id>`
    /// (``log(cluster:prefix:epoch:)``); nil in stores written before it was kept. Revisions
    /// number one etcd's writes: those of another etcd, or of a wiped one, would be skipped as
    /// applied.
    public var log: String? = nil
    /// The key of a log entry of the last transaction applied that held this cluster's entries,
    /// and that transaction's revision (nil in stores written before they were kept). An etcd
    /// restored from a backup of its own has the same cluster id and epoch, and once its
    /// revision passes the store's applied one nothing else tells it: that entry is gone, or
    /// under another revision.
    public var lastEntry: String? = nil
    /// The revision of ``lastEntry``.
    public var lastEntryRevision: Int64? = nil

    /// The ``log`` of a replica of the keys under `prefix` of the etcd cluster `cluster`, in
    /// the log's epoch `epoch` (``ClusterKeys/epoch``).
    public static func log(cluster: UInt64, prefix: String, epoch: String) -> String {
        "etcd cluster \(cluster) prefix \(prefix) epoch \(epoch)"
    }

    /// The record's key.
    public static let key = "applied"

    /// The collection that holds it.
    public static let collection = StoreCollection<ReplicaState>(name: "cluster", key: { .string($0.id) })
}

/// One page a replica applied: the log's account of what was committed, kept after the log is
/// compacted (so "no page committed twice" can still be checked).
public struct AppliedPage: Codable, Sendable, Hashable {
    /// `<source> <version>` (zero-padded version).
    public var id: String
    /// The source.
    public var source: String
    /// The checkpoint version the page took the source to.
    public var version: Int64
    /// The request the page answered.
    public var label: String
    /// The etcd revision that committed it.
    public var revision: Int64
    /// How many log entries it took.
    public var parts: Int
    /// How many articles it carried.
    public var articles: Int

    /// The collection that holds them.
    public static let collection = StoreCollection<AppliedPage>(name: "cluster_pages", key: { .string($0.id) })
}
