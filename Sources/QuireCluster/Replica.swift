import Foundation
public import Quire
import QuireFetch
import Synchronization

/// Applies the replicated log to a local store, in revision order, and serves reads locally.
///
/// Each poll reads the log entries written after the applied revision (sorted by revision) and
/// writes all of them in one LMDB write transaction together with the new applied revision
/// (``ReplicaState``), so a replica killed at any instant resumes after exactly the last
/// revision it committed, and never applies an entry twice or skips one.
///
/// The log is compacted (``LogCompactor``) below the revision every live member has applied;
/// a replica whose applied revision lies below the compaction floor cannot catch up from the
/// log and gets ``ClusterError/Code/behindCompaction`` (the node then installs a peer's snapshot).
public final class Replica: Sendable {
    /// The local store.
    public let store: Store
    /// The cluster's etcd.
    public let client: EtcdClient
    /// The cluster's keys.
    public let keys: ClusterKeys
    /// The most log entries read per poll.
    public let batchLimit: Int
    /// The entries the next poll asks for: sized from the last poll's entries so that a poll
    /// reads about 8 MiB (big transactions amortise the full-text index's block
    /// rewrites; a bounded read keeps the gateway's answer and memory small).
    private let nextLimit: Atomic<Int>
    /// About how many bytes of log entries one poll reads.
    static let pollBytes = 8 << 20
    /// The log this replica applies, once ``checkLog()`` (or the first poll) read it.
    private let identity = Mutex<String?>(nil)

    /// A replica of the cluster into `store`; registers the news schema, the fetch sink's
    /// collections and the replica's own.
    public init(store: Store, client: EtcdClient, keys: ClusterKeys, batchLimit: Int = 1024) throws {
        self.store = store
        self.client = client
        self.keys = keys
        self.batchLimit = max(1, batchLimit)
        self.nextLimit = Atomic(min(128, max(1, batchLimit)))
        _ = try StoreFetchSink(store: store)
        try store.register(ReplicaState.collection)
        try store.register(AppliedPage.collection)
    }

    /// The revision applied so far (0 for a new store).
    public func appliedRevision() throws -> Int64 { try state()?.appliedRevision ?? 0 }

    private func state() throws -> ReplicaState? {
        try store.read { try $0.get(.string(ReplicaState.key), from: ReplicaState.collection) }
    }

    /// Checks that the store is a replica of this cluster's log, or new: a revision means
    /// something in one etcd's history only, so a store that applied another etcd's log (or
    /// another prefix's, or that of this etcd before its data was replaced) would skip every
    /// entry up to its applied revision, the pages it fetches itself included, without a word.
    /// A store with records that no log brought (a `quire fetch` or `load` store) would keep
    /// them beside the cluster's, or lose them to a peer's snapshot.
    ///
    /// - Throws: ``ClusterError/Code/foreignStore``; ``EtcdError`` when etcd does not answer.
    public func checkLog() async throws {
        let (log, revision) = try await logIdentity()
        try check(log: log, revision: revision)
        // etcd restored from a backup of its own (same cluster and epoch) once its revision
        // passed the store's: at a start, and at every poll (a member paused across the restore
        // polls again only once renewals took etcd past its revision).
        try await checkLastEntry()
        // Kept only once it passed: a foreign store must fail every poll, not the first alone.
        identity.withLock { $0 = log }
    }

    /// The log entry this store applied last must still be in etcd under its revision, unless
    /// the log was compacted past it (then the replica is behind the floor and bootstraps).
    private func checkLastEntry() async throws {
        guard let state = try state(), let (key, entryRevision) = try await lostLastEntry(of: state) else { return }
        throw ClusterError(
            .foreignStore,
            "etcd no longer holds the log entry this store applied at revision \(entryRevision) (\(key)): its data was restored from a backup or replaced since; after a restore, start the node with --rejoin-restored on this store (it resumes after the entries both hold), else on a new store")
    }

    /// The log entry `state` applied last and its revision, when etcd no longer holds it under
    /// that revision although the log was not compacted past it; nil otherwise.
    private func lostLastEntry(of state: ReplicaState) async throws -> (key: String, revision: Int64)? {
        guard let key = state.lastEntry, let entryRevision = state.lastEntryRevision else { return nil }
        let found = try await client.range(.key(key), keysOnly: true).kvs.first?.modRevision
        guard found != entryRevision else { return nil }
        // Read after the entry: the floor is raised before entries at or below it are deleted.
        guard try await LogCompactor.floor(client: client, keys: keys) < entryRevision else { return nil }
        return (key, entryRevision)
    }

    /// After etcd was restored from a backup of its own (same cluster id and epoch), makes this
    /// store a replica of the restored log again instead of refusing it: it resumes after the
    /// log entries that etcd holds and the store applied under the same revisions, in order up to
    /// the first it did not (or after the compaction floor, when that comes first). The
    /// restored checkpoints are older than the store, so the pages after that entry are fetched
    /// again and written over the store's copies; the entries committed since the restore are
    /// applied as any others.
    ///
    /// A store behind the compaction floor (a member that rejoined first compacted past it)
    /// resumes from the log's start: it bootstraps from a peer.
    ///
    /// - Returns: The revision the store resumes after (0: the log's start), or nil when it is
    ///   not ahead of etcd (nothing to do).
    /// - Throws: ``ClusterError/Code/foreignStore`` for a store of another log.
    public func rejoinRestoredLog() async throws -> Int64? {
        let (log, revision) = try await logIdentity()
        try check(log: log, revision: .max)
        guard let state = try state() else { return nil }
        var ahead = revision < state.appliedRevision
        if !ahead { ahead = try await lostLastEntry(of: state) != nil }
        guard ahead else { return nil }
        // The log's entries in revision order: the store holds those up to the first it did not
        // apply under the same revision (the restored history is the store's up to the restore
        // point; an entry committed since may match one of its later pages by chance, but not
        // all of them in order). Below the floor, entries are gone: the store held them when it
        // applied past the floor.
        let entries = try await client.range(keys.log, sortBy: .modRevision, keysOnly: true).kvs
        let floor = try await LogCompactor.floor(client: client, keys: keys)
        var held: (revision: Int64, key: String?)? = state.appliedRevision >= floor ? (floor, nil) : nil
        if held != nil {
            try store.read { snapshot in
                for kv in entries where kv.modRevision > floor {
                    guard let id = keys.appliedPageID(ofFirstPart: kv.key) else { continue }
                    let page = try snapshot.get(.string(id), from: AppliedPage.collection)
                    guard page?.revision == kv.modRevision else { break }
                    held = (kv.modRevision, kv.keyText)
                }
            }
        }
        // Behind the floor (a member that rejoined first compacted past it): from the log's
        // start, which means a peer's snapshot.
        let resumed = held.map { (revision: $0.revision, key: $0.key) }
        try await store.write { txn in
            try txn.put(
                ReplicaState(
                    id: ReplicaState.key, appliedRevision: resumed?.revision ?? 0, log: log, lastEntry: resumed?.key,
                    lastEntryRevision: resumed?.key == nil ? nil : resumed?.revision),
                in: ReplicaState.collection)
        }
        identity.withLock { $0 = log }
        return resumed?.revision ?? 0
    }

    private func check(log: String, revision: Int64) throws {
        guard let state = try state() else {
            let own = try store.storeStatistics().collections.filter {
                $0.records > 0 && $0.name != ReplicaState.collection.name && $0.name != AppliedPage.collection.name
            }
            if let first = own.first {
                throw ClusterError(
                    .foreignStore,
                    "\(store.path) holds records that no cluster log brought (\(first.records) in '\(first.name)'): a member's store holds the log's records only; start the node on a new store, and load these into the cluster through a fetch")
            }
            return
        }
        if let stored = state.log, stored != log {
            throw ClusterError(
                .foreignStore,
                "\(store.path) replicates \(stored), not \(log): start the node on a new store, or with the etcd and --prefix it was started with (a wiped etcd starts a new epoch)")
        }
        if revision < state.appliedRevision {
            throw ClusterError(
                .foreignStore,
                "etcd is at revision \(revision), below the \(state.appliedRevision) this store applied: etcd's data was replaced since (or it is another etcd); after a restore of this cluster's etcd from a backup, start the node with --rejoin-restored on this store (it resumes after the entries both hold), else on a new store")
        }
    }

    /// The log this replica applies (``ReplicaState/log``), the log's epoch written first when
    /// etcd has none (a new or wiped etcd; one transaction, so members starting together agree),
    /// and etcd's revision. Once known, each poll reads it again: an etcd wiped, replaced or
    /// failed over to another cluster under a running node has another log, whose revisions
    /// would otherwise be skipped up to the applied one.
    private func logIdentity() async throws -> (log: String, revision: Int64) {
        if let known = identity.withLock({ $0 }) {
            let header = try await client.range(.key(keys.epoch))
            // An answer without its header (a proxy, a truncated reply) says nothing of the log.
            guard header.clusterID != 0 else {
                throw EtcdError(code: .malformedResponse, message: "an answer without etcd's header", path: "/v3/kv/range")
            }
            guard let epoch = header.kvs.first?.value else {
                throw ClusterError(
                    .foreignStore,
                    "etcd has no epoch under \(keys.prefix) any more (its data was wiped, or this is another etcd): this store replicates \(known); start the node on a new store")
            }
            let log = ReplicaState.log(cluster: header.clusterID, prefix: keys.prefix, epoch: String(decoding: epoch, as: UTF8.self))
            return (log, header.revision)
        }
        try await refuseNestedPrefix()
        let fresh = Array(UUID().uuidString.utf8)
        let result = try await client.txn(
            compare: [EtcdCompare(keys.epoch, .equal, .createRevision(0))],
            success: [.put(keys.epoch, fresh)],
            failure: [.range(.key(keys.epoch))])
        let epoch = result.succeeded ? fresh : (result.ranges.first??.kvs.first?.value ?? fresh)
        let header = try await client.range(.key(keys.epoch))
        let log = ReplicaState.log(cluster: header.clusterID, prefix: keys.prefix, epoch: String(decoding: epoch, as: UTF8.self))
        return (log, header.revision)
    }

    /// Refuses a prefix inside another cluster's log range (`--prefix /quire/log/` beside
    /// `/quire/`), and one whose log range holds another cluster (its epoch at `<prefix>log/epoch`):
    /// the outer cluster's compaction deletes every key of its log range, so the inner cluster's
    /// epoch, members, owners, checkpoints and entries went within seconds of it.
    private func refuseNestedPrefix() async throws {
        let prefix = keys.prefix
        var from = prefix.startIndex
        while let found = prefix.range(of: "log/", range: from..<prefix.endIndex) {
            let outer = String(prefix[..<found.lowerBound])
            if try await client.get(outer + "epoch") != nil {
                throw ClusterError(
                    .nestedPrefix,
                    "--prefix \(prefix) lies inside the log of the cluster under \(outer) (\(outer)log/), whose compaction deletes every key there: choose a prefix outside it")
            }
            from = found.upperBound
        }
        if try await client.get(prefix + "log/epoch") != nil {
            throw ClusterError(
                .nestedPrefix,
                "a cluster runs under \(prefix)log/, inside this prefix's log, which this cluster's compaction would delete: choose a prefix outside each other's log/")
        }
    }

    /// What one poll applied.
    public struct Batch: Sendable, Hashable {
        /// Pages applied.
        public var pages: Int
        /// Articles written.
        public var articles: Int
        /// The applied revision after the batch.
        public var appliedRevision: Int64
        /// Whether more entries were waiting (poll again at once).
        public var more: Bool
        /// How long after its fetch each page was applied, in seconds.
        public var lags: [Double]
    }

    /// Applies the entries written after the applied revision (at most ``batchLimit``, about
    /// 8 MiB of them).
    ///
    /// - Throws: ``ClusterError/Code/behindCompaction`` when entries this replica needs were
    ///   compacted away; ``ClusterError/Code/foreignStore`` when the store is not this log's
    ///   (``checkLog()``, at every poll: etcd may be wiped or replaced under a running node); ``EtcdError``; store errors (nothing of the batch is
    ///   then applied).
    public func applyOnce() async throws -> Batch {
        // Every poll checks the store is this log's, as a node does at its start.
        try await checkLog()
        let applied = try appliedRevision()
        let answer = try await client.range(
            keys.log, minModRevision: applied + 1, sortBy: .modRevision, limit: nextLimit.load(ordering: .relaxed))
        if !answer.kvs.isEmpty {
            let average = max(1, answer.kvs.reduce(0) { $0 + $1.value.count } / answer.kvs.count)
            nextLimit.store(min(batchLimit, max(1, Self.pollBytes / average)), ordering: .relaxed)
        }
        // Read after the range: the floor is raised before any entry is deleted, so a floor at
        // or below `applied` here means nothing this replica needs was gone when it read.
        let floor = try await LogCompactor.floor(client: client, keys: keys)
        if floor > applied {
            throw ClusterError(
                .behindCompaction, "applied revision \(applied) is below the log's compaction floor \(floor)")
        }
        var groups = try Self.group(answer.kvs, keys)
        // The entries the groups came from (the whole last transaction, when it was read again).
        var groupedKVs = answer.kvs
        // The limit may cut the entries of the last revision (one transaction): the applied
        // revision must only move past whole transactions.
        if answer.more, let last = groups.last, last.entries.count < (last.entries.first?.entriesInTransaction ?? 0) {
            if groups.count > 1 {
                groups.removeLast()
            } else {
                let whole = try await client.range(
                    keys.log, minModRevision: last.revision, maxModRevision: last.revision)
                groups = try Self.group(whole.kvs, keys)
                groupedKVs = whole.kvs
                if try await LogCompactor.floor(client: client, keys: keys) > applied {
                    throw ClusterError(.behindCompaction, "the log was compacted past \(applied) while it was read")
                }
            }
        }
        let log = identity.withLock { $0 }
        guard let newRevision = groups.last?.revision else {
            // Only keys that are not this cluster's entries (whole transactions of another
            // prefix's member): passed, or every poll would ask for them again and stall.
            if let passed = answer.kvs.last?.modRevision, passed > applied {
                let previous = try state()
                try await store.write { txn in
                    try txn.put(
                        ReplicaState(
                            id: ReplicaState.key, appliedRevision: passed, log: log, lastEntry: previous?.lastEntry,
                            lastEntryRevision: previous?.lastEntryRevision),
                        in: ReplicaState.collection)
                }
                return Batch(pages: 0, articles: 0, appliedRevision: passed, more: answer.more, lags: [])
            }
            return Batch(pages: 0, articles: 0, appliedRevision: applied, more: false, lags: [])
        }
        let pages = groups
        let lastEntry = groupedKVs.last { $0.modRevision == newRevision && keys.logEntrySource($0.key) != nil }?.keyText
        let articles = try await store.write { txn in
            var written = 0
            var batch: [(page: FetchedPage, rejects: [RejectedDocument])] = []
            for group in pages {
                let entries = group.entries.sorted { ($0.source, $0.version, $0.part) < ($1.source, $1.version, $1.part) }
                for entry in entries {
                    batch.append((entry.page, entry.rejects))
                    written += entry.articles.count
                    guard entry.part == 0 else { continue }
                    let id = entry.source + " " + ClusterKeys.padded(entry.version, width: 12)
                    let articles = entries.filter { $0.source == entry.source && $0.version == entry.version }
                        .reduce(0) { $0 + $1.articles.count }
                    try txn.put(
                        AppliedPage(
                            id: id, source: entry.source, version: entry.version, label: entry.label,
                            revision: group.revision, parts: entry.parts, articles: articles),
                        in: AppliedPage.collection)
                }
            }
            // One batch for the whole poll: the full-text postings are built once, not per page.
            _ = try StoreFetchSink.write(pages: batch, retainRawDocuments: false, in: txn)
            try txn.put(
                ReplicaState(
                    id: ReplicaState.key, appliedRevision: newRevision, log: log, lastEntry: lastEntry,
                    lastEntryRevision: lastEntry.map { _ in newRevision }),
                in: ReplicaState.collection)
            return written
        }
        let now = Date()
        let lags = pages.flatMap { group in
            group.entries.filter { $0.part == 0 }.map { now.timeIntervalSince($0.fetchedAt) }
        }
        let pageCount = lags.count
        return Batch(
            pages: pageCount, articles: articles, appliedRevision: newRevision,
            more: answer.more, lags: lags)
    }

    /// Log entries in revision order, grouped by the revision (transaction) that wrote them.
    /// Keys in the log's range that are not this cluster's entries are left out: those of a
    /// member started with a prefix inside this one's log (`/quire/log`: its checkpoints, its
    /// member keys, its own log under `/quire/log/log/…`) stalled every member (`corrupt log
    /// entry`, naming no key) until removed by hand, or would have been applied as pages.
    static func group(_ kvs: [EtcdKeyValue], _ keys: ClusterKeys) throws(ClusterError)
        -> [(revision: Int64, entries: [LogEntry])]
    {
        var groups: [(revision: Int64, entries: [LogEntry])] = []
        for kv in kvs {
            guard let source = keys.logEntrySource(kv.key) else { continue }
            let entry: LogEntry
            do {
                entry = try LogEntry.decode(kv.value)
            } catch {
                throw ClusterError(error.code, "\(kv.keyText): \(error.message)")
            }
            guard entry.source == source else { continue }
            if groups.last?.revision == kv.modRevision {
                groups[groups.count - 1].entries.append(entry)
            } else {
                groups.append((kv.modRevision, [entry]))
            }
        }
        return groups
    }
}
