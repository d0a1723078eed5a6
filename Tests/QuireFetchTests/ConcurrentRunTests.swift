import Foundation
import Quire
import QuireFetch
import QuireFixtures
import QuireNews
import Synchronization
import Testing

/// A sink where "another run" of the same source commits `other` just before this run's commit
/// number `before` (counted from 1).
private final class InterleavedSink<Inner: FetchSink>: FetchSink {
    let inner: Inner
    let before: Int
    let other: FetchedPage
    private let commits = Mutex(0)

    /// `other` commits unchecked: the other run's own view of the checkpoint is not this one's.
    init(_ inner: Inner, before: Int, other: FetchedPage) {
        var other = other
        other.follows = nil
        (self.inner, self.before, self.other) = (inner, before, other)
    }

    func checkpoint(for sourceID: String) async throws -> Data? { try await inner.checkpoint(for: sourceID) }

    func commit(_ page: FetchedPage) async throws -> PageCommit {
        let number = commits.withLock { count in
            count += 1
            return count
        }
        if number == before { _ = try await inner.commit(other) }
        return try await inner.commit(page)
    }
}

/// Two fetches of one query at once each fetched every page (twice the quota): a page commits
/// only while its source's checkpoint is what its run read or last wrote, so the second run
/// stops at its next commit and the first one's pages are kept.
@Suite struct ConcurrentRunTests {
    /// (this run's commit before which the other commits, the other run's page that commits then)
    static let interleavings = [(1, 0), (2, 1), (3, 2)]

    /// A fixture API of `articles` articles, and what one run alone commits from it.
    private func referenceRun(articles: Int, maxPage: Int) async throws -> (FixtureAPI, InMemoryFetchSink) {
        let api = try makeAPI {
            $0.nytArticlesPerQuery = articles
            $0.maxPage = maxPage
        }
        let reference = InMemoryFetchSink()
        _ = try await makeService().run(nytSource(api), into: reference)
        return (api, reference)
    }

    @Test(arguments: interleavings) func aRunWhoseCheckpointMovedStopsAndKeepsTheOthersPages(before: Int, otherPage: Int) async throws {
        let (api, reference) = try await referenceRun(articles: 50, maxPage: 4)
        let pages = reference.committedPages
        try #require(pages.count > 4)
        let inner = InMemoryFetchSink()
        let sink = InterleavedSink(inner, before: before, other: pages[otherPage])
        do {
            _ = try await makeService().run(nytSource(api), into: sink)
            Issue.record("the run went on over the other run's checkpoint")
        } catch {
            #expect(error.code == .concurrentRun, "\(error)")
            #expect(error.description.contains("another run of this source"), "\(error)")
        }
        // This run's pages before the other's commit, then the other's; none after.
        #expect(inner.commitCount == before)
        #expect(inner.checkpoints.values.first == pages[otherPage].checkpoint)
        // A later run goes on from the other run's checkpoint to the same end.
        let resumed = try await makeService().run(nytSource(api), into: inner)
        #expect(resumed.resumed && resumed.isComplete)
        #expect(inner.checkpoints == reference.checkpoints)
        #expect(Set(inner.articles.map(\.id)) == Set(reference.articles.map(\.id)))
    }

    /// The store's sink checks in the page's transaction, before anything of it is written.
    @Test func theStoresSinkRefusesAPageWhoseCheckpointMoved() async throws {
        let (api, reference) = try await referenceRun(articles: 30, maxPage: 2)
        let pages = reference.committedPages
        try #require(pages.count >= 3)
        try await withTemporaryStore { store in
            let inner = try StoreFetchSink(store: store)
            let sink = InterleavedSink(inner, before: 2, other: pages[2])
            do {
                _ = try await makeService().run(nytSource(api), into: sink)
                Issue.record("the run went on over the other run's checkpoint")
            } catch {
                #expect((error as? FetchError)?.code == .concurrentRun, "\(error)")
            }
            #expect(try await inner.checkpoint(for: pages[2].sourceID) == pages[2].checkpoint)
            // The refused page's articles (page 1's own) were not written: the store holds page
            // 0's and the other run's page 2's.
            let stored = try store.read { snap in try snap.count(of: NewsSchema.articles) }
            #expect(stored == Set((pages[0].articles + pages[2].articles).map(\.id)).count)
            let resumed = try await makeService().run(nytSource(api), into: inner)
            #expect(resumed.isComplete)
            #expect(try await inner.checkpoint(for: pages[2].sourceID) == reference.checkpoints[pages[2].sourceID])
        }
    }
}
