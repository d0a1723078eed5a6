import Foundation
import Quire
import QuireCluster
import QuireFetch
import QuireFixtures
import QuireNews
import QuireTestSupport
import Testing

/// etcd's limits: pages split into parts written in one transaction, records too large for an
/// entry refused, transactions over etcd's operation count refused before sending.
@Suite struct LogLimitTests {
    static func articles(_ count: Int) -> [Article] {
        var configuration = FixtureAPI.Configuration()
        configuration.nytArticlesPerQuery = count
        let api = try? FixtureAPI(configuration: configuration)
        defer { api?.stop() }
        return api?.nytArticles(query: "limits") ?? []
    }

    @Test func aLargePageIsSplitIntoPartsOfOneRevisionAndAppliedWhole() async throws {
        try await withEtcd { client, _ in
            try await withTemporaryDirectory("split", create: false) { path in
                let keys = ClusterKeys(prefix: "/t/")
                let articles = Self.articles(10)
                #expect(articles.count == 10)
                // Entries of at most 4 KB: a page of 10 articles (about 6–7 KB compressed) needs several.
                let sink = ClusterFetchSink(client: client, keys: keys, ownership: nil, maxEntryBytes: 4096)
                _ = try await sink.checkpoint(for: "s")
                let page = FetchedPage(
                    sourceID: "s", articles: articles, pageLabel: "page 0", queryTag: "s", checkpoint: Data("1".utf8),
                    fetchedAt: Date(timeIntervalSince1970: 0))
                _ = try await sink.commit(page)
                let log = try await client.range(keys.log).kvs
                #expect(log.count > 1)
                #expect(Set(log.map(\.modRevision)).count == 1, "the parts of a page are one transaction")
                #expect(log.allSatisfy { $0.value.count <= 4096 })
                let parts = try log.map { try LogEntry.decode($0.value) }
                #expect(parts.map(\.part).sorted() == Array(0..<log.count))
                #expect(parts.allSatisfy { $0.parts == log.count && $0.version == 1 })

                let store = try Store(path: path)
                defer { store.close() }
                let replica = try Replica(store: store, client: client, keys: keys)
                let batch = try await replica.applyOnce()
                #expect(batch.pages == 1 && batch.articles == 10)
                let stored = try store.read { try $0.values(of: NewsSchema.articles) }
                #expect(Set(stored.map(\.id)) == Set(articles.map(\.id)))
                let applied = try store.read { try $0.values(of: AppliedPage.collection) }
                #expect(applied.map(\.parts) == [log.count])
                #expect(applied.map(\.articles) == [10])
            }
        }
    }

    @Test func aPollCutInsideARevisionAppliesOnlyWholeRevisions() async throws {
        try await withEtcd { client, _ in
            try await withTemporaryDirectory("cut", create: false) { path in
                let keys = ClusterKeys(prefix: "/t/")
                let articles = Self.articles(40)
                func entry(_ version: Int64, of transaction: Int) throws -> EtcdOperation {
                    let slice = Array(articles[Int(version - 1) * 10..<Int(version) * 10])
                    let log = LogEntry(
                        source: "s", version: version, part: 0, parts: 1, label: "page \(version)", mappingKind: "nyt",
                        queryTag: nil, fetchedAt: Date(timeIntervalSince1970: 0), checkpoint: Data("\(version)".utf8),
                        articles: slice, lists: [], rejects: [], transactionEntries: transaction)
                    return .put(keys.logEntry(source: "s", version: version, part: 0), try log.encoded())
                }
                // One revision with one page, then one revision with three pages.
                _ = try await client.txn(compare: [], success: [try entry(1, of: 1)])
                _ = try await client.txn(
                    compare: [], success: [try entry(2, of: 3), try entry(3, of: 3), try entry(4, of: 3)])
                let store = try Store(path: path)
                defer { store.close() }
                let replica = try Replica(store: store, client: client, keys: keys, batchLimit: 2)
                // The first poll sees page 1 and one of the three: it applies page 1 only.
                let first = try await replica.applyOnce()
                #expect(first.pages == 1)
                // The next poll sees two of the three (one revision): it reads that revision whole.
                let second = try await replica.applyOnce()
                #expect(second.pages == 3)
                #expect(try await replica.applyOnce().pages == 0)
                let stored = try store.read { try $0.values(of: NewsSchema.articles) }
                #expect(Set(stored.map(\.id)) == Set(articles.map(\.id)))
            }
        }
    }

    @Test func aRecordLargerThanAnEntryIsRefusedAndNothingIsCommitted() async throws {
        try await withEtcd { client, _ in
            let keys = ClusterKeys(prefix: "/t/")
            let sink = ClusterFetchSink(client: client, keys: keys, ownership: nil, maxEntryBytes: 256)
            _ = try await sink.checkpoint(for: "s")
            let page = FetchedPage(
                sourceID: "s", articles: Self.articles(1), pageLabel: "page 0", queryTag: nil,
                checkpoint: Data("1".utf8), fetchedAt: Date())
            await #expect {
                try await sink.commit(page)
            } throws: { ($0 as? ClusterError)?.code == .pageTooLarge }
            #expect(try await client.range(keys.log).kvs.isEmpty)
            #expect(try await client.get(keys.checkpoint("s")) == nil)
        }
    }

    @Test func aTransactionOverEtcdsOperationLimitIsRefusedBeforeSending() async throws {
        try await withEtcd { client, _ in
            let operations = (0..<129).map { EtcdOperation.put("/t/k\($0)", [1]) }
            await #expect {
                try await client.txn(compare: [], success: operations)
            } throws: { ($0 as? EtcdError)?.code == .tooLarge }
            let big = [EtcdOperation.put("/t/big", [UInt8](repeating: 7, count: 1_600_000))]
            await #expect {
                try await client.txn(compare: [], success: big)
            } throws: { ($0 as? EtcdError)?.code == .tooLarge }
            #expect(try await client.range(.prefix("/t/")).kvs.isEmpty)
            // At the limit it goes through.
            let result = try await client.txn(compare: [], success: Array(operations.prefix(128)))
            #expect(result.succeeded)
            #expect(try await client.range(.prefix("/t/"), keysOnly: true).kvs.count == 128)
        }
    }
}
