import Foundation
public import Quire
public import QuireFetch
import QuireHTTP
public import QuireServe
import Synchronization

/// One member of a cluster: it keeps a full local replica of the log in its store, competes for
/// the ownership of the sources it is given and fetches those it owns, exactly once.
///
/// ``run()`` runs until its task is cancelled, then revokes the member's lease (its sources are
/// free for the others at once) and closes the store. Everything it does is reported through
/// the `events` closure; nothing is printed.
public final class ClusterNode: Sendable {
    /// How a node runs.
    public struct Configuration: Sendable {
        /// The member's id, unique in the cluster (`quire node` uses the host name and the store path).
        public var memberID: String
        /// The local store's directory.
        public var storePath: String
        /// Where the cluster's keys live in etcd.
        public var keys = ClusterKeys()
        /// The lease TTL in seconds: how long a dead member keeps its sources.
        public var leaseTTL: Int64 = 5
        /// How often an idle replica polls the log, and a non-owner retries a source.
        public var pollInterval: Duration = .milliseconds(200)
        /// Revisions applied by every member above the compaction floor before the log is compacted.
        public var compactionThreshold: Int64 = 500
        /// How often the compaction is considered.
        public var compactionInterval: Duration = .seconds(1)
        /// The address the node serves snapshots of its store on (port 0: any free port); nil
        /// serves none.
        public var snapshotAddress: SocketAddress? = .loopback
        /// The options the store is opened with.
        public var storeOptions = StoreOptions()
        /// Requests a minute the node makes to the news API.
        public var fetchRatePerMinute = 6_000
        /// Runs of a source that fail in a row (after the fetch's own retries) before the
        /// member gives the source up, so that a member that can fetch it takes it.
        public var failedRunsBeforeGivingUp = 3
        /// How long a member waits before it claims a source it gave up again.
        public var pauseAfterGivingUp: Duration = .seconds(30)
        /// Whether a store ahead of etcd (etcd restored from a backup of its own) resumes after
        /// the log entries both hold instead of being refused (`quire node --rejoin-restored`).
        public var rejoinRestoredLog = false

        /// A configuration for member `memberID` with its store at `storePath`.
        public init(memberID: String, storePath: String) {
            self.memberID = memberID
            self.storePath = storePath
        }
    }

    /// The configuration.
    public let configuration: Configuration
    /// The cluster's etcd.
    public let client: EtcdClient
    /// The sources this member competes for.
    public let sources: [any FetchSource]
    private let events: @Sendable (ClusterEvent) -> Void
    /// The node's requests to the news API, whatever the source: one budget for all of them.
    private let rateLimiter: RateLimiter
    private let store = Mutex<Store?>(nil)
    private let lease = Atomic<Int64>(0)
    private let applied = Atomic<Int64>(0)
    private let snapshotURL = Mutex<String?>(nil)
    /// Why the node must stop although its replica could go on (another node holds its member id).
    private let leaseFailure = Mutex<ClusterError?>(nil)

    /// A node; nothing happens before ``run()``.
    public init(
        configuration: Configuration, client: EtcdClient, sources: [any FetchSource],
        events: @escaping @Sendable (ClusterEvent) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.client = client
        self.sources = sources
        self.events = events
        rateLimiter = RateLimiter(perMinute: configuration.fetchRatePerMinute, perDay: 10_000_000)
    }

    /// The store the node currently applies the log to (replaced when it bootstraps). Not
    /// public: a write to it would bypass the log, and a bootstrap would drop it.
    package var currentStore: Store? { store.withLock { $0 } }

    /// Reads the replica the node currently applies the log to, in one snapshot; nil before
    /// the node has opened its store. A bootstrap that replaces the store waits for the read.
    public func read<R>(_ body: (borrowing Snapshot) throws -> R) throws -> R? {
        guard let current = currentStore else { return nil }
        return try current.read(body)
    }

    /// Runs the member until the task is cancelled.
    ///
    /// - Throws: ``ClusterError/Code/storeInUse`` when another node runs on the store path;
    ///   when the store cannot be opened or etcd never answers the first lease grant;
    ///   later failures are reported as ``ClusterEvent/retrying(_:)`` and retried.
    public func run() async throws {
        let path = configuration.storePath
        // First: the cleanup below would delete a running node's download.
        let storeLock = try NodeStoreLock(path: path)
        defer { storeLock.release() }
        StoreSnapshot.recover(path: path)
        // A start refused before the node took its lease (its member id in use) leaves no
        // empty store behind in a directory it made (after the recovery, which may put one back).
        let made = !FileManager.default.fileExists(atPath: path)
        var started = false
        defer { if made && !started { try? FileManager.default.removeItem(atPath: path) } }
        try StoreSnapshot.checkReplaceable(path)
        let opened = try Store(path: path, options: configuration.storeOptions)
        store.withLock { $0 = opened }
        var replica = try Replica(store: opened, client: client, keys: configuration.keys)
        do {
            if configuration.rejoinRestoredLog {
                var resumed: Int64?
                try await untilEtcdAnswers("rejoining the restored log") { resumed = try await replica.rejoinRestoredLog() }
                if let resumed { events(.rejoined(appliedRevision: resumed)) }
            }
            try await untilEtcdAnswers("reading the log") { try await replica.checkLog() }
        } catch {
            store.withLock { current in
                current?.close()
                current = nil
            }
            throw error
        }
        applied.store(try replica.appliedRevision(), ordering: .relaxed)
        let server = try configuration.snapshotAddress.map { address in
            try SnapshotServer(address: address) { [self] in
                self.store.withLock { current in current.flatMap { try? StoreSnapshot.bytes(of: $0) } }
            }
        }
        snapshotURL.withLock { $0 = server?.url }
        defer {
            server?.stop()
            store.withLock { current in
                current?.close()
                current = nil
            }
        }
        var holder: Int64 = 0
        try await untilEtcdAnswers("checking the member id") { holder = try await checkMemberIDFree() }
        do {
            try await grantLease(claimingFrom: holder)
        } catch {
            await revokeLease()  // granted, maybe, when a stop or a refusal came
            throw error
        }
        started = true

        let replicaTask = Task { [self] in
            await self.replicate(&replica)
        }
        var failure: (any Error)?
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                if let lost = await self.keepLeaseAlive() {
                    self.leaseFailure.withLock { $0 = lost }
                    replicaTask.cancel()
                }
            }
            group.addTask { await self.compactWhenPossible() }
            for source in sources {
                group.addTask { await self.fetchWhenOwned(source) }
            }
            failure = await withTaskCancellationHandler {
                await replicaTask.value
            } onCancel: {
                replicaTask.cancel()
            }
            group.cancelAll()
        }
        await revokeLease()
        if let failure = failure ?? leaseFailure.withLock({ $0 }) { throw failure }
    }

    /// Frees this member's sources at once instead of after the TTL: in a task of its own, since
    /// this one is cancelled when the node stops (and a cancelled task's requests are not sent),
    /// for at most two seconds (etcd may be down).
    private func revokeLease() async {
        let (client, id) = (client, lease.load(ordering: .relaxed))
        await Task.detached {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { try? await client.revoke(id) }
                group.addTask { try? await Task.sleep(for: .seconds(2)) }
                await group.next()
                group.cancelAll()
            }
        }.value
    }

    /// Runs `body` until etcd answers it, reporting each retryable failure.
    private func untilEtcdAnswers(_ what: String, _ body: () async throws -> Void) async throws {
        while true {
            do {
                return try await body()
            } catch {
                // A stop during the request is a stop, whatever the client made of it.
                if Task.isCancelled { throw CancellationError() }
                guard (error as? EtcdError)?.isRetryable == true else { throw error }
                events(.retrying("\(what): \(error)"))
                try await Task.sleep(for: .seconds(1))
            }
        }
    }

    // MARK: The lease

    /// Grants a lease and claims the member's status key with it: the claim writes only when
    /// the key was last written at `holder` (0: it must be absent), so of two nodes started
    /// together under one id, or a paused node resumed beside its replacement, one stops.
    private func grantLease(claimingFrom holder: Int64 = 0) async throws {
        var granted: [Int64] = []
        try await untilEtcdAnswers("granting the lease") {
            while true {
                let lease = try await client.grantLease(ttl: configuration.leaseTTL)
                granted.append(lease.id)
                self.lease.store(lease.id, ordering: .relaxed)
                let key = configuration.keys.member(configuration.memberID)
                let claim: EtcdTxnResult
                do {
                    claim = try await client.txn(
                        compare: [EtcdCompare(key, .equal, .modRevision(holder))],
                        success: [.put(key, status.encoded, lease: lease.id)],
                        failure: [.range(.key(key))])
                } catch let error as EtcdError where error.code == .refused(grpcCode: EtcdError.grpcNotFound) {
                    // The lease expired before the claim used it (a loaded machine, a short TTL).
                    events(.retrying("claiming the member id: \(error)"))
                    continue
                }
                guard !claim.succeeded else {
                    events(.leaseGranted(id: lease.id, ttl: lease.ttl))
                    return
                }
                // Claimed by a try of this loop whose answer was lost: the key is this node's.
                if let now = claim.ranges.first??.kvs.first, granted.contains(now.lease) {
                    try await publishStatus()
                    events(.leaseGranted(id: lease.id, ttl: lease.ttl))
                    return
                }
                throw memberInUse(key)
            }
        }
    }

    /// The error of a member id that another node holds.
    private func memberInUse(_ key: String) -> ClusterError {
        ClusterError(
            .memberInUse,
            "member id '\(configuration.memberID)' is used by a live node (its status under \(key) is renewed): give this node another --member, or stop the other")
    }

    /// Refuses to start when a live node runs under this member id: both would write one status
    /// key (the compactor's view of the member flipping between them), and a bootstrap leaves
    /// out its own id's snapshot. A live node publishes its status again at each renewal; a
    /// key that does not change is a dead node's, gone when its lease expires (a restart after
    /// a kill waits for that, at most two of this node's TTLs, then takes the key over).
    /// Returns the revision the key was last written at (0: absent), for the claim.
    private func checkMemberIDFree() async throws -> Int64 {
        let key = configuration.keys.member(configuration.memberID)
        guard let first = try await client.get(key) else { return 0 }
        guard first.lease != 0 else { return first.modRevision }
        // Said first: a restart after a kill waited up to two TTLs (an hour's at the most) silently.
        events(
            .retrying(
                "member id '\(configuration.memberID)' has a status on a lease: watching it for up to \(2 * configuration.leaseTTL + 1) s to see whether its node still runs (one that was killed does not)"))
        let deadline = ContinuousClock.now + .seconds(2 * configuration.leaseTTL + 1)
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(250))
            guard let now = try await client.get(key) else { return 0 }
            if now.modRevision != first.modRevision { throw memberInUse(key) }
        }
        return first.modRevision
    }

    /// Publishes the member's status on its lease, through `etcd` (the renewals' client, whose
    /// short timeout keeps a hung etcd member from outlasting the lease).
    private func publishStatus(through etcd: EtcdClient? = nil) async throws(EtcdError) {
        try await (etcd ?? client).put(
            configuration.keys.member(configuration.memberID), status.encoded, lease: lease.load(ordering: .relaxed))
    }

    /// The member's status now.
    private var status: MemberStatus {
        MemberStatus(
            id: configuration.memberID, appliedRevision: applied.load(ordering: .relaxed),
            snapshotURL: snapshotURL.withLock { $0 })
    }

    /// Renews the lease until cancelled; returns the error that must stop the node (its lease
    /// expired and another node took its member id meanwhile), nil when cancelled.
    private func keepLeaseAlive() async -> ClusterError? {
        let interval = Duration.milliseconds(max(200, configuration.leaseTTL * 1000 / 3))
        // With several etcd members, renewals wait a quarter of the TTL on one, not the client's
        // 5 s: a member that accepts and never answers (paused, cut off) must not outlast the
        // lease before the next is tried. With one there is no next: a longer wait is the better
        // chance on a loaded machine.
        let renewals =
            client.endpoints.count > 1
            ? EtcdClient(
                endpoints: client.endpoints,
                requestTimeout: .milliseconds(min(5_000, max(500, configuration.leaseTTL * 1000 / 4))),
                maxRequestBytes: client.maxRequestBytes, maxTxnOperations: client.maxTxnOperations)
            : client
        defer { if renewals !== client { renewals.shutdown() } }
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            if Task.isCancelled { return nil }
            do {
                let current = lease.load(ordering: .relaxed)
                if try await renewals.keepAlive(current) == 0 {
                    // Paused or cut off past the TTL: the old claims are gone (the status key
                    // with them); start a new lease, unless a replacement holds the id now.
                    events(.leaseExpired(id: current))
                    try await grantLease()
                } else {
                    try await publishStatus(through: renewals)
                }
            } catch let error as ClusterError where error.code == .memberInUse {
                return error
            } catch {
                if !Task.isCancelled { events(.retrying("renewing the lease: \(error)")) }
            }
        }
        return nil
    }

    // MARK: Replication

    /// Applies the log until cancelled; returns the error that ends the node (etcd's log is no
    /// longer the one this store replicates), nil when cancelled.
    private func replicate(_ replica: inout Replica) async -> (any Error)? {
        while !Task.isCancelled {
            do {
                let batch = try await replica.applyOnce()
                if batch.pages > 0 {
                    applied.store(batch.appliedRevision, ordering: .relaxed)
                    events(.applied(batch))
                }
                if !batch.more { try await Task.sleep(for: configuration.pollInterval) }
            } catch let error as ClusterError where error.code == .behindCompaction {
                do {
                    replica = try await bootstrap()
                } catch {
                    events(.retrying("bootstrapping: \(error)"))
                    try? await Task.sleep(for: .seconds(1))
                }
            } catch let error as ClusterError where [.foreignStore, .nestedPrefix].contains(error.code) {
                return error  // retrying would apply another log into this store, or lose its keys
            } catch is CancellationError {
                return nil
            } catch {
                if Task.isCancelled { return nil }
                events(.retrying("applying the log: \(error)"))
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
        return nil
    }

    /// Replaces the store by the snapshot of the most advanced peer that has applied at least
    /// up to the compaction floor.
    private func bootstrap() async throws -> Replica {
        let keys = configuration.keys
        let floor = try await LogCompactor.floor(client: client, keys: keys)
        let peers = try await MemberStatus.all(client: client, keys: keys)
            .filter { $0.id != configuration.memberID && $0.snapshotURL != nil && $0.appliedRevision >= floor }
            .sorted { $0.appliedRevision > $1.appliedRevision }
        var httpConfiguration = HTTPClientConfiguration()
        httpConfiguration.maxResponseBytes = Int.max
        httpConfiguration.totalTimeout = .seconds(600)
        let http = HTTPClient(configuration: httpConfiguration)
        defer { http.shutdown() }
        let path = self.configuration.storePath
        for peer in peers {
            guard let url = peer.snapshotURL else { continue }
            let revision: Int64
            do {
                revision = try await StoreSnapshot.download(from: url, for: path, client: http)
            } catch {
                events(.retrying("snapshot from \(peer.id): \(error)"))
                continue
            }
            guard revision >= floor else { continue }
            let installed: Store = try store.withLock { current in
                current?.close()
                current = nil
                defer { StoreSnapshot.recover(path: path) }
                do {
                    try StoreSnapshot.install(at: path)
                } catch {
                    current = try Store(path: path, options: self.configuration.storeOptions)
                    throw error
                }
                let fresh = try Store(path: path, options: self.configuration.storeOptions)
                current = fresh
                return fresh
            }
            let replica = try Replica(store: installed, client: client, keys: keys)
            let now = try replica.appliedRevision()
            applied.store(now, ordering: .relaxed)
            events(.bootstrapped(from: peer.id, appliedRevision: now))
            return replica
        }
        throw ClusterError(
            .behindCompaction, "no live peer offers a snapshot at or above the compaction floor \(floor)")
    }

    // MARK: Compaction

    /// The member with the smallest id compacts, below the lowest revision the live members applied.
    private func compactWhenPossible() async {
        let keys = configuration.keys
        while !Task.isCancelled {
            try? await Task.sleep(for: configuration.compactionInterval)
            do {
                let members = try await MemberStatus.all(client: client, keys: keys)
                guard members.map(\.id).min() == configuration.memberID,
                    let lowest = members.map(\.appliedRevision).min()
                else { continue }
                let floor = try await LogCompactor.floor(client: client, keys: keys)
                guard lowest - floor >= configuration.compactionThreshold else { continue }
                let deleted = try await LogCompactor.compact(upTo: lowest, client: client, keys: keys)
                events(.compacted(revision: lowest, deleted: deleted))
            } catch {
                if !Task.isCancelled { events(.retrying("compacting: \(error)")) }
            }
        }
    }

    // MARK: Fetching

    private func fetchWhenOwned(_ source: any FetchSource) async {
        let keys = configuration.keys
        let id = source.sourceID
        let http = HTTPClient()
        defer { http.shutdown() }
        let service = FetchService(
            client: http, rateLimiter: rateLimiter)
        var owned: SourceOwnership?
        var finished = false
        var failedRuns = 0
        while !Task.isCancelled {
            let currentLease = lease.load(ordering: .relaxed)
            do {
                if let claim = owned, claim.lease != currentLease {
                    owned = nil
                    events(.lost(source: id, reason: "the member's lease expired"))
                }
                if owned == nil {
                    owned = try await SourceOwnership.acquire(
                        id, member: configuration.memberID, lease: currentLease, client: client, keys: keys)
                    if owned == nil {
                        try await Task.sleep(for: configuration.pollInterval)
                        continue
                    }
                    (finished, failedRuns) = (false, 0)
                    events(.owned(source: id))
                }
                if finished {
                    // Keep the claim; notice if it was lost.
                    try await Task.sleep(for: .seconds(1))
                    if let claim = owned, try await !claim.isHeld(client: client, keys: keys) {
                        owned = nil
                        events(.lost(source: id, reason: "the owner key is gone"))
                    }
                    continue
                }
                let summary = try await fetch(source, service: service, ownership: owned)
                failedRuns = 0
                // A run with no page to ask for that is not complete stopped at the source's
                // page limit (`--max-pages`): it is done too, or the loop would ask again at once.
                if summary.isComplete || summary.pages + summary.skipped + summary.rerouted == 0 {
                    finished = true
                    events(.fetched(source: id, pages: summary.pages, articles: summary.articles))
                }
            } catch let error as FetchError where (error.cause as? ClusterError)?.code == .checkpointMoved {
                owned = nil
                events(.lost(source: id, reason: "\((error.cause as? ClusterError)?.message ?? error.message)"))
            } catch is CancellationError {
                return
            } catch let error as FetchError where error.code == .cancelled {
                return
            } catch {
                if Task.isCancelled { return }
                // What failed: a member that does not own the source was claiming it, not fetching.
                let step = owned == nil ? "claiming" : finished ? "keeping the claim on" : "fetching"
                events(.retrying("\(step) \(id): \(error)"))
                // Only the news API's failures count: etcd's (an election, a lost quorum) are
                // every member's, and giving the source up would not help.
                if let failure = error as? FetchError, failure.code != .sink { failedRuns += 1 }
                if failedRuns >= configuration.failedRunsBeforeGivingUp, let claim = owned {
                    // The API refused or unreachable from this member (a bad --base-url, its
                    // network): kept, the source would wait for ever; another member may fetch it.
                    try? await claim.release(client: client, keys: keys)
                    (owned, failedRuns) = (nil, 0)
                    events(.lost(source: id, reason: "given up after \(configuration.failedRunsBeforeGivingUp) failed runs in a row, for another member to take"))
                    try? await Task.sleep(for: configuration.pauseAfterGivingUp)
                    continue
                }
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    private func fetch<Source: FetchSource>(
        _ source: Source, service: FetchService, ownership: SourceOwnership?
    )
        async throws -> FetchSummary
    {
        let sink = ClusterFetchSink(client: client, keys: configuration.keys, ownership: ownership)
        let events = self.events
        let id = source.sourceID
        return try await service.run(source, into: sink) { progress in
            if case .pageFetched(let label, _, _, _) = progress { events(.committed(source: id, label: label)) }
        }
    }
}
