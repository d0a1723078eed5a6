/// A member's claim on a source: the `owner/<source>` key, attached to the member's lease.
///
/// While the lease lives, no other member can take the key; when the member dies its lease
/// expires after the TTL, etcd deletes the key, and the next member to try takes it. Commits
/// compare the key's creation revision with ``createRevision``, so a member whose claim
/// expired (paused, cut off) cannot commit even if it has not noticed yet.
public struct SourceOwnership: Sendable, Hashable {
    /// The source owned.
    public var source: String
    /// The lease the key is attached to.
    public var lease: Int64
    /// The revision that created the owner key: the claim's identity.
    public var createRevision: Int64

    /// Claims `source` for `member` on `lease` unless another live member holds it.
    ///
    /// - Returns: The claim, or nil when another member owns the source.
    public static func acquire(
        _ source: String, member: String, lease: Int64, client: EtcdClient, keys: ClusterKeys
    ) async throws(EtcdError) -> SourceOwnership? {
        let key = keys.owner(source)
        let result = try await client.txn(
            compare: [EtcdCompare(key, .equal, .createRevision(0))],
            success: [.put(key, Array(member.utf8), lease: lease)],
            failure: [.range(.key(key))])
        if result.succeeded {
            return SourceOwnership(source: source, lease: lease, createRevision: result.revision)
        }
        // Ours already (a claim made before a restart of this loop, on the same lease)?
        guard let current = result.ranges.first??.kvs.first, current.lease == lease,
            current.value == Array(member.utf8)
        else { return nil }
        return SourceOwnership(source: source, lease: lease, createRevision: current.createRevision)
    }

    /// Whether the claim still stands (the owner key is the one this claim created).
    public func isHeld(client: EtcdClient, keys: ClusterKeys) async throws(EtcdError) -> Bool {
        try await client.get(keys.owner(source))?.createRevision == createRevision
    }

    /// Gives the source up (deletes the owner key if it is still this claim's).
    public func release(client: EtcdClient, keys: ClusterKeys) async throws(EtcdError) {
        let key = keys.owner(source)
        _ = try await client.txn(
            compare: [EtcdCompare(key, .equal, .createRevision(createRevision))], success: [.delete(.key(key))])
    }
}
