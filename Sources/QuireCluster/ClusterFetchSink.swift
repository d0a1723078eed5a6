public import Foundation
public import QuireFetch
import Synchronization

/// The fetch service's sink on the cluster: a page commits as one etcd transaction that puts
/// the page's log entries and the source's new checkpoint, only if the checkpoint is still the
/// one this sink read (its `mod_revision`) and the source is still owned by this claim.
///
/// Two fetchers of one source can therefore never both commit a page: the second one's
/// comparison fails and it gets ``ClusterError/Code/checkpointMoved`` instead, having written
/// nothing. A commit whose answer was lost (the etcd leader died) is retried by the client on
/// another member; if the first attempt had committed, the retry fails its comparison the
/// same way, and the fetcher resumes from the checkpoint it finds.
public final class ClusterFetchSink: FetchSink {
    /// The cluster's etcd.
    public let client: EtcdClient
    /// The cluster's keys.
    public let keys: ClusterKeys
    /// The claim commits are fenced with; nil commits without an owner (tests, a single fetcher).
    public let ownership: SourceOwnership?
    /// The largest compressed log entry (a page larger than this is split in parts).
    public let maxEntryBytes: Int
    /// The checkpoint each source had when this sink read it: (mod revision, version).
    private let read = Mutex<[String: (modRevision: Int64, version: Int64)]>([:])

    /// A sink committing to the cluster's log.
    public init(client: EtcdClient, keys: ClusterKeys, ownership: SourceOwnership?, maxEntryBytes: Int = 256 * 1024) {
        self.client = client
        self.keys = keys
        self.ownership = ownership
        self.maxEntryBytes = maxEntryBytes
    }

    public func checkpoint(for sourceID: String) async throws -> Data? {
        let stored = try await client.get(keys.checkpoint(sourceID))
        read.withLock { $0[sourceID] = (stored?.modRevision ?? 0, stored?.version ?? 0) }
        return stored.map { Data($0.value) }
    }

    public func commit(_ page: FetchedPage) async throws -> PageCommit {
        let source = page.sourceID
        guard let seen = read.withLock({ $0[source] }) else {
            // The service always reads the checkpoint first; committing blind could double a page.
            throw ClusterError(.checkpointMoved, "\(source): the checkpoint was not read before a commit")
        }
        let version = seen.version + 1
        let entries = try LogEntry.entries(of: page, version: version, maxBytes: maxEntryBytes)
        var operations: [EtcdOperation] = entries.enumerated().map { part, bytes in
            .put(keys.logEntry(source: source, version: version, part: part), bytes)
        }
        operations.append(.put(keys.checkpoint(source), [UInt8](page.checkpoint)))
        var conditions = [EtcdCompare(keys.checkpoint(source), .equal, .modRevision(seen.modRevision))]
        if let ownership {
            conditions.append(EtcdCompare(keys.owner(source), .equal, .createRevision(ownership.createRevision)))
        }
        let result = try await commitTransaction(conditions, operations, label: page.pageLabel, source: source)
        guard result.succeeded else {
            read.withLock { $0[source] = nil }
            throw ClusterError(
                .checkpointMoved,
                "\(source): \(page.pageLabel) not committed: the checkpoint or the owner changed since it was read")
        }
        read.withLock { $0[source] = (result.revision, version) }
        return PageCommit(newArticles: page.articles.count, rejects: page.rejects.count)
    }

    private func commitTransaction(
        _ conditions: [EtcdCompare], _ operations: [EtcdOperation], label: String, source: String
    ) async throws -> EtcdTxnResult {
        let failure: EtcdError
        do {
            return try await client.txn(compare: conditions, success: operations)
        } catch {
            failure = error
        }
        if failure.code == .tooLarge {
            throw ClusterError(.pageTooLarge, "\(label) of \(source): \(failure.message)")
        }
        throw failure
    }
}
