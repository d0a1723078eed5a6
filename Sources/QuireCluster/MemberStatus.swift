import Foundation

/// What a member publishes under `<prefix>member/<id>`, on its lease: how far it has applied
/// the log (the compactor keeps everything above the lowest of these) and where peers can get
/// a snapshot of its store.
public struct MemberStatus: Codable, Sendable, Hashable {
    /// The member's id.
    public var id: String
    /// The revision its store has applied.
    public var appliedRevision: Int64
    /// `http://host:port/snapshot`, or nil when it serves none.
    public var snapshotURL: String?

    /// Creates a status.
    public init(id: String, appliedRevision: Int64, snapshotURL: String?) {
        self.id = id
        self.appliedRevision = appliedRevision
        self.snapshotURL = snapshotURL
    }

    var encoded: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? [UInt8](encoder.encode(self))) ?? []
    }

    /// The live members' statuses (members whose lease expired are gone from etcd).
    /// Only keys `<prefix>member/<id>` whose status names that id count: a cluster whose prefix
    /// lies under `<prefix>member/` writes its own members' keys there, and its members are not
    /// this cluster's (peers bootstrapped from their snapshots, the compactor waited for them).
    /// A key on no lease is no node's (a node writes its status on its lease): written by hand
    /// or left by a tool, it would never expire, and the compactor would wait for it for ever.
    static func all(client: EtcdClient, keys: ClusterKeys) async throws(EtcdError) -> [MemberStatus] {
        try await client.range(keys.members).kvs.compactMap { kv in
            guard kv.lease != 0, let status = try? JSONDecoder().decode(MemberStatus.self, from: Data(kv.value)),
                kv.key == Array(keys.member(status.id).utf8), !status.id.contains("/")
            else { return nil }
            return status
        }
    }
}

/// What a node reports as it runs (the library prints nothing; `quire node` prints these).
public enum ClusterEvent: Sendable {
    /// The member's lease was granted and its member id claimed with it (at start, or again after it expired).
    case leaseGranted(id: Int64, ttl: Int64)
    /// The member's lease expired before it was renewed (the process was paused or cut off):
    /// its ownerships are gone.
    case leaseExpired(id: Int64)
    /// The member took ownership of a source.
    case owned(source: String)
    /// The member lost ownership of a source (its commit was refused, or its lease expired).
    case lost(source: String, reason: String)
    /// The member finished fetching a source.
    case fetched(source: String, pages: Int, articles: Int)
    /// A page was committed to the log by this member.
    case committed(source: String, label: String)
    /// Log entries were applied to the local store.
    case applied(Replica.Batch)
    /// The log was compacted up to a revision.
    case compacted(revision: Int64, deleted: Int)
    /// The store was replaced by a peer's snapshot.
    case bootstrapped(from: String, appliedRevision: Int64)
    /// The store, ahead of an etcd restored from a backup, resumes after this revision
    /// (``ClusterNode/Configuration/rejoinRestoredLog``).
    case rejoined(appliedRevision: Int64)
    /// A failure the node retries after (etcd unreachable, a fetch error).
    case retrying(String)
}
