import Foundation
import Testing

@testable import QuireCluster

/// A cluster's members are the keys `<prefix>member/<id>` alone: another cluster whose prefix
/// lies under `<prefix>member/` writes its members' keys there, and they are not this one's.
@Suite struct MemberStatusTests {
    @Test func membersOfAClusterNestedUnderTheMemberKeysAreLeftOut() async throws {
        try await withEtcd { client, _ in
            let keys = ClusterKeys(prefix: "/p/")
            let nested = ClusterKeys(prefix: "/p/member/")
            let lease = try await client.grantLease(ttl: 600).id
            _ = try await client.put(
                keys.member("a"), MemberStatus(id: "a", appliedRevision: 7, snapshotURL: nil).encoded, lease: lease)
            _ = try await client.put(
                nested.member("b"), MemberStatus(id: "b", appliedRevision: 3, snapshotURL: "http://x/").encoded, lease: lease)
            // A status under a key that is not its own id's.
            _ = try await client.put(
                keys.member("c"), MemberStatus(id: "d", appliedRevision: 1, snapshotURL: nil).encoded, lease: lease)
            let members = try await MemberStatus.all(client: client, keys: keys)
            #expect(members.map(\.id) == ["a"])
            #expect(try await MemberStatus.all(client: client, keys: nested).map(\.id) == ["b"])
        }
    }

    /// A status on no lease is no node's (a node writes its own on its lease): put by hand, it
    /// never expired, and the compactor waited for its applied revision for ever.
    @Test func aStatusOnNoLeaseIsNoMembers() async throws {
        try await withEtcd { client, _ in
            let keys = ClusterKeys(prefix: "/p/")
            let lease = try await client.grantLease(ttl: 600).id
            _ = try await client.put(
                keys.member("a"), MemberStatus(id: "a", appliedRevision: 7, snapshotURL: nil).encoded, lease: lease)
            _ = try await client.put(keys.member("b"), MemberStatus(id: "b", appliedRevision: 1, snapshotURL: nil).encoded)
            #expect(try await MemberStatus.all(client: client, keys: keys).map(\.id) == ["a"])
        }
    }
}
