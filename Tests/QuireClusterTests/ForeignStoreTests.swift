import Foundation
import Quire
import QuireCluster
import QuireFetch
import QuireFixtures
import QuireHTTP
import QuireNews
import QuireTestSupport
import Testing

/// A member's store belongs to one log: a store of another etcd, another prefix, or a wiped
/// etcd is refused (its applied revision would skip the new log's entries), as is a store with
/// records of its own and a directory with other files (a bootstrap replaces the directory).
@Suite struct ForeignStoreTests {
    /// The fixture API's 20 articles fetched into the log under `keys`: two pages.
    static func fetchPages(into client: EtcdClient, _ keys: ClusterKeys) async throws {
        let api = try ClusterTests.fixture(articles: 20)
        defer { api.stop() }
        let (service, http) = ClusterTests.service()
        defer { http.shutdown() }
        _ = try await service.run(ClusterTests.source(api), into: ClusterFetchSink(client: client, keys: keys, ownership: nil))
    }

    /// A cluster under `/n/log/` beside one under `/n/`: the outer one's compaction deleted
    /// every key of the inner one (its epoch, members, checkpoints and entries) within seconds.
    /// Whichever starts second is refused, and the first runs on.
    @Test func aPrefixNestedInAnotherClustersLogIsRefused() async throws {
        try await withEtcd { client, _ in
            try await withTemporaryDirectory("nested") { directory in
                let outer = try Store(path: directory + "/outer")
                defer { outer.close() }
                try await Replica(store: outer, client: client, keys: ClusterKeys(prefix: "/n/")).checkLog()
                let inner = try Store(path: directory + "/inner")
                defer { inner.close() }
                await #expect {
                    try await Replica(store: inner, client: client, keys: ClusterKeys(prefix: "/n/log/")).checkLog()
                } throws: { error in
                    (error as? ClusterError)?.code == .nestedPrefix && "\(error)".contains("inside the log of the cluster under /n/")
                }
                await #expect {
                    try await Replica(store: inner, client: client, keys: ClusterKeys(prefix: "/n/log/deeper/")).checkLog()
                } throws: { ($0 as? ClusterError)?.code == .nestedPrefix }
                #expect(try await client.get("/n/log/epoch") == nil)
                // The other order: the inner one first, then the outer one.
                try await Replica(store: inner, client: client, keys: ClusterKeys(prefix: "/m/log/")).checkLog()
                let late = try Store(path: directory + "/late")
                defer { late.close() }
                await #expect {
                    try await Replica(store: late, client: client, keys: ClusterKeys(prefix: "/m/")).checkLog()
                } throws: { error in
                    (error as? ClusterError)?.code == .nestedPrefix && "\(error)".contains("a cluster runs under /m/log/")
                }
                // Side by side is fine.
                try await Replica(store: late, client: client, keys: ClusterKeys(prefix: "/k/")).checkLog()
            }
        }
    }

    @Test func aStoreOfAnotherLogOrWithItsOwnRecordsIsRefused() async throws {
        try await withEtcd { client, _ in
            try await withTemporaryDirectory("foreign") { directory in
                let keys = ClusterKeys(prefix: "/t/")
                try await Self.fetchPages(into: client, keys)
                let store = try Store(path: directory + "/replica")
                defer { store.close() }
                let replica = try Replica(store: store, client: client, keys: keys)
                try await replica.checkLog()  // new: fine
                _ = try await replica.applyOnce()
                try await replica.checkLog()  // its own log: fine
                #expect(try replica.appliedRevision() > 0)

                // This etcd with the cluster's keys gone, as a wiped etcd started again with the
                // same names has the same cluster id: a new epoch.
                try await client.delete(.prefix("/t/"))
                // The running replica sees it at its next poll, not at its next start (it polled
                // the new log from its old applied revision, skipping what came before it).
                await #expect { _ = try await replica.applyOnce() } throws: { ($0 as? ClusterError)?.code == .foreignStore }
                let wiped = try Replica(store: store, client: client, keys: keys)
                await #expect { try await wiped.checkLog() } throws: { error in
                    (error as? ClusterError)?.code == .foreignStore && "\(error)".contains("epoch")
                }
                // Refused at every poll, not only the first (the identity was kept before it was checked).
                await #expect { _ = try await wiped.applyOnce() } throws: { ($0 as? ClusterError)?.code == .foreignStore }
                // And once a new member has written the new log's epoch.
                let newcomer = try Store(path: directory + "/newcomer")
                defer { newcomer.close() }
                try await Replica(store: newcomer, client: client, keys: keys).checkLog()
                await #expect { _ = try await replica.applyOnce() } throws: { error in
                    (error as? ClusterError)?.code == .foreignStore && "\(error)".contains("epoch")
                }
                let otherPrefix = try Replica(store: store, client: client, keys: ClusterKeys(prefix: "/u/"))
                await #expect { try await otherPrefix.checkLog() } throws: { ($0 as? ClusterError)?.code == .foreignStore }
                // A wiped (here: another) etcd numbers its revisions from 1 again.
                try await withEtcd { fresh, _ in
                    let elsewhere = try Replica(store: store, client: fresh, keys: keys)
                    await #expect { try await elsewhere.checkLog() } throws: { error in
                        (error as? ClusterError)?.code == .foreignStore && "\(error)".contains("etcd cluster")
                    }
                }

                let own = try Store(path: directory + "/own")
                defer { own.close() }
                try own.register(NewsSchema.articles)
                try await own.put(Article(id: "mine", headline: "kept"), in: NewsSchema.articles)
                let adopted = try Replica(store: own, client: client, keys: keys)
                await #expect { try await adopted.checkLog() } throws: { error in
                    (error as? ClusterError)?.code == .foreignStore && "\(error)".contains("'articles'")
                }
            }
        }
    }

    /// An etcd restored from a backup of its own keeps its cluster id and epoch, and lease
    /// renewals soon take its revision past a store's applied one: the store's last applied log
    /// entry is what is gone (here deleted, as a restore to before it loses it).
    @Test func aStoreAheadOfARestoredEtcdIsRefused() async throws {
        try await withEtcd { client, _ in
            try await withTemporaryDirectory("restored") { directory in
                let keys = ClusterKeys(prefix: "/t/")
                try await Self.fetchPages(into: client, keys)
                let store = try Store(path: directory + "/replica")
                defer { store.close() }
                _ = try await Replica(store: store, client: client, keys: keys).applyOnce()
                // A restart on the same etcd: fine.
                let again = try Replica(store: store, client: client, keys: keys)
                try await again.checkLog()
                // The log's entries gone, the epoch kept; etcd's revision only grows.
                _ = try await client.delete(keys.log)
                // A running replica sees it at its next poll (one paused across the restore
                // polled on, its revision check passed by then).
                await #expect { _ = try await again.applyOnce() } throws: { error in
                    (error as? ClusterError)?.code == .foreignStore && "\(error)".contains("restored from a backup")
                }
                let restarted = try Replica(store: store, client: client, keys: keys)
                await #expect { try await restarted.checkLog() } throws: { error in
                    (error as? ClusterError)?.code == .foreignStore && "\(error)".contains("restored from a backup")
                }
                // Asked to rejoin, it holds none of the entries etcd has: from the log's start.
                #expect(try await restarted.rejoinRestoredLog() == 0)
                try await restarted.checkLog()
                #expect(try restarted.appliedRevision() == 0)
            }
        }
    }

    /// `--rejoin-restored`: a store ahead of a restored etcd resumes after the entries both hold,
    /// in order up to the first it did not apply, keeps what it applied after it, and applies
    /// what is committed since — also when a later entry committed since matches one of its
    /// pages by chance (same page, same revision).
    @Test func aStoreAheadOfARestoredEtcdRejoinsAfterTheEntriesBothHold() async throws {
        try await withEtcd { client, _ in
            try await withTemporaryDirectory("rejoin") { directory in
                let keys = ClusterKeys(prefix: "/r/")
                try await Self.fetchPages(into: client, keys)
                let store = try Store(path: directory + "/replica")
                defer { store.close() }
                let replica = try Replica(store: store, client: client, keys: keys)
                _ = try await replica.applyOnce()
                let pages = try store.read { try $0.values(of: AppliedPage.collection) }.sorted { $0.version < $1.version }
                try #require(pages.count == 2)
                #expect(try await replica.rejoinRestoredLog() == nil)  // not ahead: nothing to do
                // A restore to between the two pages: the second's entries are gone.
                let second = pages[1]
                _ = try await client.delete(.prefix(keys.prefix + "log/" + second.source + "/" + String(second.id.suffix(12)) + "/"))
                let restarted = try Replica(store: store, client: client, keys: keys)
                await #expect { try await restarted.checkLog() } throws: { ($0 as? ClusterError)?.code == .foreignStore }
                // Pages committed since the restore, the last of which the store holds by chance.
                let articlesBefore = try store.read { try $0.count(of: NewsSchema.articles) }
                let api = try ClusterTests.fixture(articles: 40)
                defer { api.stop() }
                let (service, http) = ClusterTests.service()
                defer { http.shutdown() }
                let other = NYTSource(query: NYTQuery(query: "other", sort: .oldest), key: APIKey("test-key"), endpoint: api.nytSearchURL)
                _ = try await service.run(other, into: ClusterFetchSink(client: client, keys: keys, ownership: nil))
                let since = try await client.range(keys.log, sortBy: .modRevision, keysOnly: true).kvs
                    .filter { !$0.keyText.contains("/" + second.source + "/") && $0.keyText.hasSuffix("/000") }
                try #require(since.count >= 2)
                let last = try #require(since.last)
                // `<prefix>log/<source>/<12-digit version>/000`
                let source = String(last.keyText.dropFirst((keys.prefix + "log/").count).dropLast(17))
                let version = String(last.keyText.dropLast(4).suffix(12))
                let planted: [String: Any] = [
                    "id": source + " " + version, "source": source, "version": Int(version) ?? 0, "label": "by chance",
                    "revision": last.modRevision, "parts": 1, "articles": 0,
                ]
                let chance = try JSONDecoder().decode(AppliedPage.self, from: JSONSerialization.data(withJSONObject: planted))
                try await store.write { txn in try txn.put(chance, in: AppliedPage.collection) }
                #expect(try await restarted.rejoinRestoredLog() == pages[0].revision)
                try await restarted.checkLog()
                #expect(try restarted.appliedRevision() == pages[0].revision)
                var applied = 0
                while true {
                    let batch = try await restarted.applyOnce()
                    applied += batch.pages
                    if batch.pages == 0 && !batch.more { break }
                }
                #expect(applied == since.count)
                let after = try store.read { try $0.values(of: AppliedPage.collection) }
                #expect(after.contains { $0.id == second.id })
                #expect(!after.contains { $0.label == "by chance" })
                #expect(try store.read { try $0.count(of: NewsSchema.articles) } > articlesBefore)
            }
        }
    }

    /// A member started with a prefix inside this cluster's log (`/t/log`) writes its keys
    /// there; they are not this cluster's entries: left out, not a "corrupt log entry" stalling
    /// every member, and its own log's pages are not applied as this cluster's.
    @Test func keysOfAPrefixNestedInTheLogAreLeftOut() async throws {
        try await withEtcd { client, _ in
            try await withTemporaryDirectory("nested", create: false) { path in
                let keys = ClusterKeys(prefix: "/t/")
                try await Self.fetchPages(into: client, ClusterKeys(prefix: "/t/log"))
                try await Self.fetchPages(into: client, keys)
                let store = try Store(path: path)
                defer { store.close() }
                // A poll of one entry: the first polls hold only the nested member's keys (which
                // stalled the replica for good when it did not pass them).
                let replica = try Replica(store: store, client: client, keys: keys, batchLimit: 1)
                var applied = 0
                while true {
                    let batch = try await replica.applyOnce()
                    applied += batch.pages
                    if !batch.more && batch.pages == 0 { break }
                }
                #expect(applied == 2, "\(applied) pages applied")  // 20 articles, 10 a page
                let pages = try store.read { try $0.values(of: AppliedPage.collection) }
                #expect(pages.allSatisfy { !$0.source.hasPrefix("log/") })
            }
        }
    }

    /// Runs `node`, which should be refused at once: one that runs instead is stopped after a minute.
    static func refusedRun(_ node: ClusterNode) async -> Result<Void, any Error> {
        let run = Task { try await node.run() }
        let stop = Task {
            try await Task.sleep(for: .seconds(60))
            run.cancel()
        }
        defer { stop.cancel() }
        return await run.result
    }

    /// A store path in a directory that does not exist is said so (it was "store in use:
    /// cannot open ….node-lock", sending the operator after a second node).
    @Test func aStoreInAMissingDirectoryIsSaidSo() async throws {
        try await withEtcd { client, _ in
            try await withTemporaryDirectory("missing") { directory in
                let result = await Self.refusedRun(ClusterNode(
                    configuration: ClusterNode.Configuration(memberID: "m", storePath: directory + "/absent/store"),
                    client: client, sources: []))
                #expect(throws: StoreError.self) { try result.get() }
                #expect(String(describing: result).contains("its directory does not exist"), "\(result)")
            }
        }
    }

    @Test func aDirectoryWithOtherFilesIsRefusedAndKept() async throws {
        try await withEtcd { client, _ in
            try await withTemporaryDirectory("victim") { directory in
                let note = directory + "/notes.txt"
                try Data("mine".utf8).write(to: URL(fileURLWithPath: note))
                let result = await Self.refusedRun(ClusterNode(
                    configuration: ClusterNode.Configuration(memberID: "v", storePath: directory), client: client,
                    sources: []))
                #expect(throws: ClusterError.self) { try result.get() }
                #expect(String(describing: result).contains("notes.txt"), "\(result)")
                #expect(FileManager.default.contents(atPath: note) == Data("mine".utf8))
                #expect(!FileManager.default.fileExists(atPath: directory + "/data.mdb"))
            }
        }
    }

    /// The first signal frees the member's sources at once: the lease is revoked, not left to
    /// expire (the stopping task is cancelled, and a cancelled task's requests were not sent).
    @Test func aStoppedNodeRevokesItsLease() async throws {
        try await withEtcd { client, _ in
            try await withTemporaryDirectory("revoke", create: false) { path in
                var configuration = ClusterNode.Configuration(memberID: "r", storePath: path)
                configuration.keys = ClusterKeys(prefix: "/t/")
                configuration.leaseTTL = 600
                let events = Events()
                let node = ClusterNode(configuration: configuration, client: client, sources: []) { events.append($0) }
                let run = Task { try await node.run() }
                try await events.wait(for: .seconds(600)) { if case .leaseGranted = $0 { true } else { false } }
                let lease = try #require(events.leaseID)
                #expect(try await client.keepAlive(lease) > 0)
                run.cancel()
                _ = await run.result
                #expect(try await client.keepAlive(lease) == 0, "the lease outlived the node's stop")
                #expect(try await client.get(configuration.keys.member("r")) == nil)
            }
        }
    }
}
