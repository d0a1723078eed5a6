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
            _ = try await client.put(keys.member("a"), MemberStatus(id: "a", appliedRevision: 7, snapshotURL: nil).encoded)
            _ = try await client.put(nested.member("b"), MemberStatus(id: "b", appliedRevision: 3, snapshotURL: "http://x/").encoded)
            // A status under a key that is not its own id's.
            _ = try await client.put(keys.member("c"), MemberStatus(id: "d", appliedRevision: 1, snapshotURL: nil).encoded)
            let members = try await MemberStatus.all(client: client, keys: keys)
            #expect(members.map(\.id) == ["a"])
            #expect(try await MemberStatus.all(client: client, keys: nested).map(\.id) == ["b"])
        }
    }
}
