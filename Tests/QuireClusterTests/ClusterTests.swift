import Foundation
import Quire
import QuireCluster
import QuireFetch
import QuireFixtures
import QuireHTTP
import QuireNews
import QuireTestSupport
import Synchronization
import Testing

/// The cluster against a real etcd on loopback (started by each test, stopped by PID).
@Suite struct ClusterTests {
    /// A fixture API serving `articles` NYT articles for the query "cluster" (10 a page).
    static func fixture(articles: Int) throws -> FixtureAPI {
        var configuration = FixtureAPI.Configuration()
        configuration.nytArticlesPerQuery = articles
        return try FixtureAPI(configuration: configuration)
    }

    static func source(_ api: FixtureAPI) -> NYTSource {
        NYTSource(query: NYTQuery(query: "cluster", sort: .oldest), key: APIKey("test-key"), endpoint: api.nytSearchURL)
    }

    static func service() -> (FetchService, HTTPClient) {
        let http = HTTPClient()
        return (FetchService(client: http, rateLimiter: RateLimiter(perMinute: 100_000, perDay: 10_000_000)), http)
    }

    /// Every log entry, decoded.
    static func log(_ client: EtcdClient, _ keys: ClusterKeys) async throws -> [(revision: Int64, entry: LogEntry)] {
        try await client.range(keys.log, sortBy: .modRevision).kvs.map {
            ($0.modRevision, try LogEntry.decode($0.value))
        }
    }

    @Test func aPageCommitsOnlyAgainstTheCheckpointItsFetcherRead() async throws {
        try await withEtcd { client, _ in
            let keys = ClusterKeys(prefix: "/t/")
            let api = try Self.fixture(articles: 30)
            defer { api.stop() }
            let first = ClusterFetchSink(client: client, keys: keys, ownership: nil)
            let second = ClusterFetchSink(client: client, keys: keys, ownership: nil)
            let id = Self.source(api).sourceID
            #expect(try await first.checkpoint(for: id) == nil)
            #expect(try await second.checkpoint(for: id) == nil)
            let page = FetchedPage(
                sourceID: id, articles: [], pageLabel: "page 0", queryTag: nil, checkpoint: Data("1".utf8),
                fetchedAt: Date(timeIntervalSince1970: 0))
            _ = try await first.commit(page)
            // The second read the same (absent) checkpoint: its commit of the same page is refused.
            await #expect {
                try await second.commit(page)
            } throws: { ($0 as? ClusterError)?.code == .checkpointMoved }
            let entries = try await Self.log(client, keys)
            #expect(entries.map(\.entry.version) == [1])
            #expect(try await client.get(keys.checkpoint(id))?.value == Array("1".utf8))
        }
    }

    @Test func twoCompetingFetchersCommitEveryPageOnce() async throws {
        try await withEtcd { client, _ in
            let keys = ClusterKeys(prefix: "/t/")
            let api = try Self.fixture(articles: 80)
            defer { api.stop() }
            let source = Self.source(api)
            let (service, http) = Self.service()
            defer { http.shutdown() }
            // Each fetcher walks the source from the checkpoint it reads; when the other one
            // committed first its commit is refused and it starts again from the new checkpoint.
            @Sendable func fetcher() async throws -> Int {
                var refused = 0
                while true {
                    do {
                        let sink = ClusterFetchSink(client: client, keys: keys, ownership: nil)
                        let summary = try await service.run(source, into: sink)
                        if summary.isComplete { return refused }
                    } catch {
                        guard (error.cause as? ClusterError)?.code == .checkpointMoved else { throw error }
                        refused += 1
                    }
                }
            }
            async let a = fetcher()
            async let b = fetcher()
            _ = try await (a, b)
            let entries = try await Self.log(client, keys)
            let versions = entries.map(\.entry.version)
            // 80 articles are 8 pages; the walk ends with a page past the end (no articles).
            #expect(versions == Array(1...Int64(versions.count)))
            #expect(Set(entries.map(\.entry.label)).count == entries.count, "a page was committed twice")
            let ids = entries.flatMap { $0.entry.articles.map(\.id) }
            #expect(ids.count == 80)
            #expect(Set(ids) == Set(api.nytArticles(query: "cluster").map(\.id)))
        }
    }

    @Test func aDeadOwnersSourceIsTakenOverWhenItsLeaseExpires() async throws {
        try await withEtcd { client, _ in
            let keys = ClusterKeys(prefix: "/t/")
            // B's lease outlives the test however slow etcd is: with every suite running at once
            // on two cores, a CI run took 219 s over this test (etcd's fsyncs wait on the disk).
            let leaseB = try await client.grantLease(ttl: 1_800)
            // A's must lapse within the test, so it is short; should it lapse before A's claim
            // (etcd answers "lease not found"), A claims again on a new one.
            var claimA: (lease: EtcdLease, owner: SourceOwnership?)?
            for _ in 0..<5 where claimA?.owner == nil {
                let lease = try await client.grantLease(ttl: 20)
                claimA = (lease, try? await SourceOwnership.acquire("s", member: "a", lease: lease.id, client: client, keys: keys))
            }
            let leaseA = try #require(claimA?.lease)
            let ownerA = try #require(claimA?.owner)
            // While A renews its lease, B cannot take the source. A renews just before each try;
            // should one request still outlast the lease (a starved etcd waits on fsync), B may
            // take it only because etcd reports A's lease gone.
            for _ in 0..<2 {
                _ = try await client.keepAlive(leaseA.id)
                guard try await SourceOwnership.acquire(
                    "s", member: "b", lease: leaseB.id, client: client, keys: keys) != nil
                else { continue }
                #expect(try await client.keepAlive(leaseA.id) == 0, "B took the source while A's lease lived")
                break
            }
            // A stops renewing (it died): B polls until it owns the source (bounded, not timed).
            var ownerB: SourceOwnership?
            for _ in 0..<600 where ownerB == nil {
                try await Task.sleep(for: .milliseconds(100))
                ownerB = try await SourceOwnership.acquire(
                    "s", member: "b", lease: leaseB.id, client: client, keys: keys)
            }
            #expect(ownerB != nil)
            // B got it because A's lease expired, not before: etcd reports A's lease gone.
            #expect(try await client.keepAlive(leaseA.id) == 0)
            #expect(try await client.get(keys.owner("s"))?.lease == leaseB.id)
            // A's old claim is fenced: a commit with it is refused even though it read the checkpoint.
            let stale = ClusterFetchSink(client: client, keys: keys, ownership: ownerA)
            _ = try await stale.checkpoint(for: "s")
            let page = FetchedPage(
                sourceID: "s", articles: [], queryTag: nil, checkpoint: Data("x".utf8), fetchedAt: Date())
            await #expect {
                try await stale.commit(page)
            } throws: { ($0 as? ClusterError)?.code == .checkpointMoved }
            let current = ClusterFetchSink(client: client, keys: keys, ownership: ownerB)
            _ = try await current.checkpoint(for: "s")
            _ = try await current.commit(page)
            #expect(try await Self.log(client, keys).count == 1)
        }
    }

    /// A source stopped by its page limit is done for the node, as a complete one is: it said
    /// nothing and asked etcd for the checkpoint again at once, a thousand times a second.
    @Test func aSourceAtItsPageLimitIsDoneNotAskedAgain() async throws {
        try await withEtcd { client, _ in
            try await withTemporaryDirectory("limit") { directory in
                let api = try Self.fixture(articles: 50)
                defer { api.stop() }
                let limited = NYTSource(
                    query: NYTQuery(query: "cluster", sort: .oldest), key: APIKey("test-key"), endpoint: api.nytSearchURL,
                    maxPages: 2)
                var configuration = ClusterNode.Configuration(memberID: "a", storePath: directory + "/a")
                configuration.keys = ClusterKeys(prefix: "/t/")
                configuration.leaseTTL = 15
                let events = Events()
                let node = ClusterNode(configuration: configuration, client: client, sources: [limited]) { events.append($0) }
                let run = Task { try await node.run() }
                defer { run.cancel() }
                try await events.wait(for: .seconds(600)) { if case .fetched = $0 { true } else { false } }
                let fetched = events.all.filter { if case .fetched = $0 { true } else { false } }
                #expect(fetched.count == 1, "\(fetched)")
                #expect(try await Self.log(client, configuration.keys).count == 2)
            }
        }
    }

    /// A member whose runs of a source keep failing (here its key is refused) gives the source
    /// up, so that another member can take it; it kept the claim for ever.
    @Test func aMemberThatCannotFetchGivesTheSourceUp() async throws {
        try await withEtcd { client, _ in
            try await withTemporaryDirectory("giveup") { directory in
                var apiConfiguration = FixtureAPI.Configuration()
                apiConfiguration.apiKey = "the-right-key"
                let api = try FixtureAPI(configuration: apiConfiguration)
                defer { api.stop() }
                let refused = NYTSource(
                    query: NYTQuery(query: "cluster", sort: .oldest), key: APIKey("a-wrong-key"), endpoint: api.nytSearchURL)
                var configuration = ClusterNode.Configuration(memberID: "a", storePath: directory + "/a")
                configuration.keys = ClusterKeys(prefix: "/t/")
                configuration.leaseTTL = 15
                configuration.failedRunsBeforeGivingUp = 2
                configuration.pauseAfterGivingUp = .seconds(600)
                let events = Events()
                let node = ClusterNode(configuration: configuration, client: client, sources: [refused]) { events.append($0) }
                let run = Task { try await node.run() }
                defer { run.cancel() }
                try await events.wait(for: .seconds(600)) { event in
                    if case .lost(_, let reason) = event { reason.hasPrefix("given up") } else { false }
                }
                let failures = events.all.filter { if case .retrying(let what) = $0 { what.hasPrefix("fetching") } else { false } }
                #expect(failures.count >= 2, "\(events.all)")
                // The owner key is gone: another member's claim succeeds at once.
                let lease = try await client.grantLease(ttl: 60)
                let taken = try await SourceOwnership.acquire(
                    refused.sourceID, member: "b", lease: lease.id, client: client, keys: configuration.keys)
                #expect(taken != nil)
            }
        }
    }

    /// A second node under a member id a live node uses is refused: both wrote one status key,
    /// and the newer one waited for ever for a snapshot from a peer other than itself.
    @Test func aMemberIDInUseByALiveNodeIsRefused() async throws {
        try await withEtcd { client, server in
            try await withTemporaryDirectory("twice") { directory in
                let keys = ClusterKeys(prefix: "/t/")
                // The live node: its status published again and again on its lease, by a process
                // of its own (a task here waits behind the other tests on a loaded machine). A put
                // does not renew a lease: it is long, so that it outlives the check however late
                // that starts, and revoked below.
                let lease = try await client.grantLease(ttl: 3_600)
                let live = ChildProcess()
                live.executableURL = URL(fileURLWithPath: "/bin/sh")
                live.arguments = [
                    "-c",
                    "n=0; while true; do n=$((n+1)); ETCDCTL_API=3 etcdctl --endpoints=\(server.clientURL) put "
                        + "--lease=\(String(lease.id, radix: 16)) \(keys.member("a")) "
                        + "\"{\\\"id\\\":\\\"a\\\",\\\"appliedRevision\\\":$n}\" >/dev/null; sleep 1; done",
                ]
                try live.run()
                // SIGKILL: the shell's loop must end at once, whatever it is running.
                defer {
                    if live.isRunning {
                        kill(live.processIdentifier, SIGKILL)
                        live.waitUntilExit()
                    }
                }
                var published = false
                for _ in 0..<6_000 where !published {
                    published = try await client.get(keys.member("a")) != nil
                    if !published { try await Task.sleep(for: .milliseconds(50)) }
                }
                try #require(published)
                var configuration = ClusterNode.Configuration(memberID: "a", storePath: directory + "/a")
                configuration.keys = keys
                // Long: the check watches the key for two TTLs.
                configuration.leaseTTL = 15
                let said = Events()
                let node = ClusterNode(configuration: configuration, client: client, sources: []) { said.append($0) }
                let first = Task { try await node.run() }
                let watchdog = Task {
                    try? await Task.sleep(for: .seconds(600))
                    first.cancel()  // a node that started anyway: the expectation fails, nothing hangs
                }
                defer { watchdog.cancel() }
                await #expect { try await first.value } throws: { ($0 as? ClusterError)?.code == .memberInUse }
                // It said what it waited for (a restart after a kill waited silently).
                #expect(said.all.contains { "\($0)".contains("watching it for up to 31 s") }, "\(said.all)")
                // Refused before it took its lease: no empty store, no lock file left beside it.
                #expect(!FileManager.default.fileExists(atPath: directory + "/a"))
                #expect(!FileManager.default.fileExists(atPath: directory + "/a.node-lock"))
                kill(live.processIdentifier, SIGKILL)
                live.waitUntilExit()
                // A dead node's key (not renewed) is taken over once its lease is gone.
                try await client.revoke(lease.id)
                var restarted = ClusterNode.Configuration(memberID: "a", storePath: directory + "/b")
                restarted.keys = keys
                let events = Events()
                let second = ClusterNode(configuration: restarted, client: client, sources: []) { events.append($0) }
                let run = Task { try await second.run() }
                defer { run.cancel() }
                try await events.wait(for: .seconds(600)) { if case .leaseGranted = $0 { true } else { false } }
            }
        }
    }

    /// Two nodes started together under one member id: both found the key free, and both ran,
    /// each writing the status on its own lease. The claim writes only where the key is absent,
    /// so one of them stops with `memberInUse` and the other runs on.
    @Test func twoNodesStartedTogetherUnderOneIDLeaveOneRunning() async throws {
        try await withEtcd { client, _ in
            try await withTemporaryDirectory("together") { directory in
                let keys = ClusterKeys(prefix: "/together/")
                let outcomes = Outcomes()
                var runs: [Task<Void, Never>] = []
                for name in ["x", "y"] {
                    var configuration = ClusterNode.Configuration(memberID: "same", storePath: directory + "/" + name)
                    configuration.keys = keys
                    configuration.leaseTTL = 4
                    let node = ClusterNode(configuration: configuration, client: client, sources: [])
                    runs.append(
                        Task {
                            do {
                                try await node.run()
                                outcomes.append("stopped")
                            } catch {
                                outcomes.append((error as? ClusterError)?.code == .memberInUse ? "in use" : "\(error)")
                            }
                        })
                }
                // One refusal comes within the check's two TTLs; the other node still runs after it.
                let deadline = ContinuousClock.now + .seconds(300)
                while outcomes.all.isEmpty, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(50))
                }
                try await Task.sleep(for: .seconds(3))
                #expect(outcomes.all == ["in use"])
                for run in runs { run.cancel() }
                for run in runs { await run.value }
                #expect(outcomes.all.sorted() == ["in use", "stopped"])
            }
        }
    }

    /// A node whose lease expired while another node took its member id (a paused node resumed
    /// beside its replacement) stops instead of running on as a second node of that id.
    @Test func aNodeWhoseIDWasTakenWhileItsLeaseExpiredStops() async throws {
        try await withEtcd { client, _ in
            try await withTemporaryDirectory("replaced") { directory in
                let keys = ClusterKeys(prefix: "/replaced/")
                var configuration = ClusterNode.Configuration(memberID: "m", storePath: directory + "/m")
                configuration.keys = keys
                // Long enough not to expire on a loaded machine before the revoke below.
                configuration.leaseTTL = 10
                let events = Events()
                let node = ClusterNode(configuration: configuration, client: client, sources: []) { events.append($0) }
                let run = Task { try await node.run() }
                defer { run.cancel() }
                try await events.wait(for: .seconds(600)) { if case .leaseGranted = $0 { true } else { false } }
                let old = try #require(events.leaseID)
                // The replacement's status on its own lease, then the old lease gone, as expired.
                let replacement = try await client.grantLease(ttl: 600)
                _ = try await client.put(keys.member("m"), Array("{\"id\":\"m\",\"appliedRevision\":0}".utf8), lease: replacement.id)
                try await client.revoke(old)
                let watchdog = Task {
                    try? await Task.sleep(for: .seconds(120))
                    run.cancel()  // a node that ran on: the expectation fails, nothing hangs
                }
                defer { watchdog.cancel() }
                await #expect { try await run.value } throws: { ($0 as? ClusterError)?.code == .memberInUse }
                #expect(events.all.contains { if case .leaseExpired(let id) = $0 { id == old } else { false } })
                #expect(try await client.get(keys.member("m"))?.lease == replacement.id)
                try await client.revoke(replacement.id)
            }
        }
    }

    /// A second node on the store path of a running one is refused before it touches the
    /// directory: its start-up cleanup deleted the first's snapshot download, and after the
    /// first's bootstrap it wrote into a directory swapped away. The path is free once the
    /// first stops.
    @Test func aSecondNodeOnARunningNodesStoreIsRefused() async throws {
        try await withEtcd { client, _ in
            try await withTemporaryDirectory("shared") { directory in
                func node(_ member: String, _ events: Events) -> ClusterNode {
                    var configuration = ClusterNode.Configuration(memberID: member, storePath: directory + "/store")
                    configuration.keys = ClusterKeys(prefix: "/t/")
                    configuration.leaseTTL = 15
                    return ClusterNode(configuration: configuration, client: client, sources: []) { events.append($0) }
                }
                let eventsA = Events()
                let runA = Task { try await node("a", eventsA).run() }
                try await eventsA.wait(for: .seconds(600)) { if case .leaseGranted = $0 { true } else { false } }
                // A staging directory the first node is filling must survive the second's start.
                let staging = directory + "/store.bootstrap"
                try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
                await #expect {
                    try await node("b", Events()).run()
                } throws: { ($0 as? ClusterError)?.code == .storeInUse }
                #expect(FileManager.default.fileExists(atPath: staging))
                try FileManager.default.removeItem(atPath: staging)
                runA.cancel()
                _ = await runA.result
                let eventsB = Events()
                let runB = Task { try await node("b", eventsB).run() }
                defer { runB.cancel() }
                try await eventsB.wait(for: .seconds(600)) { if case .leaseGranted = $0 { true } else { false } }
            }
        }
    }

    /// A bootstrap stopped between its two renames leaves the replaced store and the download
    /// beside an empty path: the next start installs the download only if it opens as a store,
    /// else puts the replaced store back (it deleted it and installed random bytes).
    @Test func anInterruptedBootstrapKeepsTheReplacedStoreWhenTheDownloadIsDamaged() async throws {
        try await withEtcd { client, _ in
            try await withTemporaryDirectory("interrupted") { directory in
                let path = directory + "/store"
                /// Runs a node on `location` until it has its lease; returns its data file's inode
                /// (a rename keeps it: which store the node opened).
                func started(at location: String) async throws -> UInt64 {
                    var configuration = ClusterNode.Configuration(memberID: "i", storePath: location)
                    configuration.keys = ClusterKeys(prefix: "/interrupted/")
                    configuration.leaseTTL = 15
                    let events = Events()
                    let node = ClusterNode(configuration: configuration, client: client, sources: []) { events.append($0) }
                    let run = Task {
                        do { try await node.run() } catch { events.append(.retrying("ended: \(error)")) }
                    }
                    defer { run.cancel() }
                    try await events.wait(for: .seconds(600)) {
                        switch $0 {
                        case .leaseGranted: true
                        case .retrying(let message): message.hasPrefix("ended")
                        default: false
                        }
                    }
                    try #require(events.leaseID != nil, "\(events.all)")
                    run.cancel()
                    await run.value
                    let attributes = try FileManager.default.attributesOfItem(atPath: location + "/data.mdb")
                    return try #require((attributes[.systemFileNumber] as? NSNumber)?.uint64Value)
                }
                let manager = FileManager.default
                let replaced = try await started(at: directory + "/first")
                try manager.moveItem(atPath: directory + "/first", toPath: path + ".replaced")
                try manager.createDirectory(atPath: path + ".bootstrap", withIntermediateDirectories: false)
                try Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(to: URL(fileURLWithPath: path + ".bootstrap/data.mdb"))
                #expect(try await started(at: path) == replaced)
                #expect(!manager.fileExists(atPath: path + ".replaced") && !manager.fileExists(atPath: path + ".bootstrap"))
                // A download that opens as a store is the one installed.
                let downloaded = try await started(at: directory + "/second")
                try manager.moveItem(atPath: path, toPath: path + ".replaced")
                try manager.moveItem(atPath: directory + "/second", toPath: path + ".bootstrap")
                #expect(try await started(at: path) == downloaded)
                #expect(!manager.fileExists(atPath: path + ".replaced") && !manager.fileExists(atPath: path + ".bootstrap"))
                // A start refused after the recovery put a store back leaves that store in place
                // (the refusal's cleanup removes only a directory the start made itself).
                let refused = directory + "/refused"
                do {
                    let own = try Store(path: refused + ".replaced")
                    defer { own.close() }
                    try NewsSchema.register(in: own)
                    var generator = ArticleGenerator(seed: 52)
                    try await own.put(generator.articles(count: 1)[0], in: NewsSchema.articles)
                }
                var configuration = ClusterNode.Configuration(memberID: "j", storePath: refused)
                configuration.keys = ClusterKeys(prefix: "/interrupted/")
                await #expect { try await ClusterNode(configuration: configuration, client: client, sources: []).run() } throws: {
                    ($0 as? ClusterError)?.code == .foreignStore
                }
                #expect(manager.fileExists(atPath: refused + "/data.mdb"))
            }
        }
    }

    /// `--rate` is the node's: its sources share one budget (each source had its own, so a
    /// node of four sources made four times the requests asked for).
    @Test func theNodesSourcesShareOneRequestRate() async throws {
        try await withEtcd { client, _ in
            try await withTemporaryDirectory("rate") { directory in
                let api = try Self.fixture(articles: 50)
                defer { api.stop() }
                let sources = ["alpha", "beta"].map { query in
                    NYTSource(query: NYTQuery(query: query, sort: .oldest), key: APIKey("test-key"), endpoint: api.nytSearchURL)
                }
                var configuration = ClusterNode.Configuration(memberID: "a", storePath: directory + "/a")
                configuration.keys = ClusterKeys(prefix: "/t/")
                configuration.leaseTTL = 15
                configuration.fetchRatePerMinute = 30  // a request every 2 s
                let events = Events()
                let node = ClusterNode(configuration: configuration, client: client, sources: sources) { events.append($0) }
                let run = Task { try await node.run() }
                defer { run.cancel() }
                func committed() -> [Duration] {
                    events.times.compactMap { if case .committed = $0.event { $0.at } else { nil } }
                }
                var tries = 0
                while committed().count < 4 && tries < 6_000 {
                    tries += 1
                    try await Task.sleep(for: .milliseconds(50))
                }
                let times = committed()
                try #require(times.count >= 4, "\(events.all)")
                // Four requests 2 s apart span 6 s (a commit may lag its request by a little);
                // two budgets of their own would have made them in about 2.
                #expect(times[3] - times[0] >= .seconds(4), "\(times)")
            }
        }
    }

    @Test func aReplicaResumesAfterARestartFromItsStoredRevision() async throws {
        try await withEtcd { client, _ in
            try await withTemporaryDirectory("replica", create: false) { path in
                let keys = ClusterKeys(prefix: "/t/")
                let api = try Self.fixture(articles: 60)
                defer { api.stop() }
                let (service, http) = Self.service()
                defer { http.shutdown() }
                _ = try await service.run(
                    Self.source(api), into: ClusterFetchSink(client: client, keys: keys, ownership: nil))
                let entries = try await Self.log(client, keys)

                var store = try Store(path: path)
                var replica = try Replica(store: store, client: client, keys: keys, batchLimit: 2)
                let first = try await replica.applyOnce()
                #expect(first.pages == 2)
                #expect(first.appliedRevision == entries[1].revision)
                store.close()

                // Restarted: it reads its applied revision back and goes on from the next entry.
                store = try Store(path: path)
                defer { store.close() }
                replica = try Replica(store: store, client: client, keys: keys, batchLimit: 2)
                #expect(try replica.appliedRevision() == entries[1].revision)
                var applied = first.pages
                while true {
                    let batch = try await replica.applyOnce()
                    if batch.pages == 0 { break }
                    applied += batch.pages
                }
                #expect(applied == entries.count)
                #expect(try replica.appliedRevision() == entries.last?.revision)
                let pages = try store.read { snapshot in try snapshot.values(of: AppliedPage.collection) }
                #expect(pages.map(\.version).sorted() == entries.map(\.entry.version))
                let stored = try store.read { try $0.values(of: NewsSchema.articles) }
                #expect(Set(stored.map(\.id)) == Set(api.nytArticles(query: "cluster").map(\.id)))
                #expect(stored.count == 60)
            }
        }
    }

    @Test func aMemberBehindTheCompactionBootstrapsFromAPeersSnapshot() async throws {
        try await withEtcd { client, server in
            try await withTemporaryDirectory("bootstrap") { directory in
                let keys = ClusterKeys(prefix: "/t/")
                let api = try Self.fixture(articles: 50)
                defer { api.stop() }
                let (service, http) = Self.service()
                defer { http.shutdown() }
                _ = try await service.run(
                    Self.source(api), into: ClusterFetchSink(client: client, keys: keys, ownership: nil))
                let last = try #require(try await Self.log(client, keys).last?.revision)

                func node(_ id: String, _ events: Events) -> ClusterNode {
                    var configuration = ClusterNode.Configuration(memberID: id, storePath: directory + "/" + id)
                    configuration.keys = keys
                    // Long: nothing here waits for a lease to end, and a full test run on two
                    // cores starves a node's keep-alive for seconds (an expired lease takes its
                    // member entry, and with it the peer B bootstraps from, until renewed).
                    configuration.leaseTTL = 15
                    configuration.compactionThreshold = 1
                    configuration.compactionInterval = .milliseconds(200)
                    return ClusterNode(configuration: configuration, client: client, sources: []) { events.append($0) }
                }
                let eventsA = Events()
                let a = node("a", eventsA)
                let runA = Task { try await a.run() }
                defer { runA.cancel() }
                // A alone applies everything, then compacts the log under it.
                try await eventsA.wait(for: .seconds(600)) { if case .compacted = $0 { true } else { false } }
                #expect(try await LogCompactor.floor(client: client, keys: keys) == last)
                #expect(try await client.range(keys.log).kvs.isEmpty)

                let fresh = try Store(path: directory + "/c")
                let behind = try Replica(store: fresh, client: client, keys: keys)
                await #expect {
                    try await behind.applyOnce()
                } throws: { ($0 as? ClusterError)?.code == .behindCompaction }
                fresh.close()

                let eventsB = Events()
                let b = node("b", eventsB)
                let runB = Task { try await b.run() }
                try await eventsB.wait(for: .seconds(600)) { if case .bootstrapped = $0 { true } else { false } }
                let storeB = try #require(b.currentStore)
                #expect(try Replica(store: storeB, client: client, keys: keys).appliedRevision() == last)
                let ids = try #require(try b.read { try $0.values(of: NewsSchema.articles) }).map(\.id)
                #expect(Set(ids) == Set(api.nytArticles(query: "cluster").map(\.id)))
                runB.cancel()
                _ = await runB.result
                runA.cancel()
                _ = await runA.result
                _ = server
            }
        }
    }
}

/// Events of a node, collected for a test to wait on.
/// How the runs of several nodes ended, in order.
final class Outcomes: Sendable {
    private let list = Mutex<[String]>([])
    var all: [String] { list.withLock { $0 } }
    func append(_ outcome: String) { list.withLock { $0.append(outcome) } }
}

final class Events: Sendable {
    private let started = ContinuousClock.now
    private let events = Mutex<[(at: Duration, event: ClusterEvent)]>([])

    /// Every event so far, oldest first.
    var all: [ClusterEvent] { events.withLock { $0.map(\.event) } }

    /// When each event came, since the first was collected could be.
    var times: [(at: Duration, event: ClusterEvent)] { events.withLock { $0 } }

    func append(_ event: ClusterEvent) {
        let at = ContinuousClock.now - started
        events.withLock { $0.append((at, event)) }
    }

    /// The lease the node was granted last.
    var leaseID: Int64? {
        events.withLock { $0.compactMap { if case .leaseGranted(let id, _) = $0.event { id } else { nil } }.last }
    }

    /// No event matched in time; `seen` lists what the node reported, so a failure says where it stopped.
    struct Timeout: Error, CustomStringConvertible {
        let seen: [(at: Duration, event: ClusterEvent)]
        var description: String {
            "no matching event; the node reported: " + seen.map { "\($0.at): \($0.event)" }.joined(separator: "; ")
        }
    }

    /// Waits until an event matches, for `limit` of time this task could run.
    ///
    /// A pause far longer than the 50 ms poll means the cooperative pool (two threads here) was
    /// busy with other tests; the node waited too, so only 250 ms of such a pause counts. It
    /// checks once more after the last pause before it gives up. In a full `swift test` on two
    /// cores, etcd's fsyncs and the nodes' tasks wait behind a hundred other tests: the bootstrap
    /// test that takes 3 s alone took 137–194 s there, hence the generous limits.
    func wait(for limit: Duration, until matches: (ClusterEvent) -> Bool) async throws {
        var waited: Duration = .zero
        while true {
            if events.withLock({ $0.contains { matches($0.event) } }) { return }
            if waited >= limit { throw Timeout(seen: events.withLock { $0 }) }
            let before = ContinuousClock.now
            try await Task.sleep(for: .milliseconds(50))
            waited += min(ContinuousClock.now - before, .milliseconds(250))
        }
    }
}
