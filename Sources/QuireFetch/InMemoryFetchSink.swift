public import Foundation
public import QuireNews
import Synchronization

/// A ``FetchSink`` and ``OfflineReader`` in memory, for tests and examples.
///
/// Commits are atomic (one lock): records, query index and checkpoint change together. It can
/// simulate a crash: after ``crashAfterCommits`` successful commits, every further commit throws
/// ``SimulatedCrash`` and stores nothing, as if the process had died before the transaction.
///
/// A class with a lock rather than an actor, because ``OfflineReader`` reads synchronously (as the
/// store's memory-mapped reads do).
public final class InMemoryFetchSink: FetchSink, OfflineReader, Sendable {
    private let state: Mutex<State>

    private struct State {
        var articles: [String: Article] = [:]
        var articleOrder: [String] = []
        var lists: [String: ArticleList] = [:]
        var rawDocuments: [String: [UInt8]] = [:]
        var queryIndex: [String: [String]] = [:]
        var queryFetchedAt: [String: Date] = [:]
        var checkpoints: [String: Data] = [:]
        var pages: [FetchedPage] = []
        var crashAfterCommits: Int?
    }

    /// The error a commit throws once the crash point is reached.
    public struct SimulatedCrash: Error, Sendable, CustomStringConvertible {
        /// Commits that succeeded before the crash.
        public var committed: Int
        public var description: String { "simulated crash after \(committed) commits" }
    }

    /// An empty sink that crashes after `crashAfterCommits` commits (never when `nil`).
    public init(crashAfterCommits: Int? = nil) {
        state = Mutex(State(crashAfterCommits: crashAfterCommits))
    }

    /// Commits allowed before the simulated crash (`nil`: never crash). Counted from the start,
    /// so set it to `commitCount + n` to crash after `n` more.
    public var crashAfterCommits: Int? {
        get { state.withLock { $0.crashAfterCommits } }
        set { state.withLock { $0.crashAfterCommits = newValue } }
    }

    public func checkpoint(for sourceID: String) async throws -> Data? {
        state.withLock { $0.checkpoints[sourceID] }
    }

    public func commit(_ page: FetchedPage) async throws -> PageCommit {
        try state.withLock { (state: inout State) throws in
            if let limit = state.crashAfterCommits, state.pages.count >= limit {
                throw SimulatedCrash(committed: state.pages.count)
            }
            try CheckpointMoved.check(page, against: state.checkpoints[page.sourceID])
            var outcome = PageCommit(rejects: page.rejects.count)
            outcome.writtenIDs = []
            var seen: Set<String> = []
            for (index, article) in page.articles.enumerated() {
                let stored = state.articles.updateValue(article, forKey: article.id)
                if stored == nil {
                    state.articleOrder.append(article.id)
                    outcome.newArticles += 1
                } else if !seen.contains(article.id) {
                    if stored == article { outcome.unchangedArticles += 1 } else { outcome.updatedArticles += 1 }
                }
                if stored != article { outcome.writtenIDs?.append(article.id) }
                seen.insert(article.id)
                if index < page.rawDocuments.count { state.rawDocuments[article.id] = page.rawDocuments[index] }
                if let tag = page.queryTag, !(state.queryIndex[tag]?.contains(article.id) ?? false) {
                    state.queryIndex[tag, default: []].append(article.id)
                }
            }
            for list in page.lists { state.lists[list.id] = list }
            if let tag = page.queryTag { state.queryFetchedAt[tag] = page.fetchedAt }
            state.checkpoints[page.sourceID] = page.checkpoint
            state.pages.append(page)
            return outcome
        }
    }

    public func storedArticles(for queryTag: String) throws -> (articles: [Article], fetchedAt: Date?) {
        state.withLock { state in
            ((state.queryIndex[queryTag] ?? []).compactMap { state.articles[$0] }, state.queryFetchedAt[queryTag])
        }
    }

    /// Forgets `sourceID`'s checkpoint (the next run starts over; stored records stay).
    public func resetCheckpoint(for sourceID: String) {
        state.withLock { _ = $0.checkpoints.removeValue(forKey: sourceID) }
    }

    /// Every stored article, in first-commit order.
    public var articles: [Article] { state.withLock { s in s.articleOrder.compactMap { s.articles[$0] } } }

    /// Every stored list, by id.
    public var lists: [String: ArticleList] { state.withLock { $0.lists } }

    /// Stored raw documents, by article id.
    public var rawDocuments: [String: [UInt8]] { state.withLock { $0.rawDocuments } }

    /// Article ids by query tag, in first-fetch order.
    public var queryIndex: [String: [String]] { state.withLock { $0.queryIndex } }

    /// Stored checkpoints, by source id.
    public var checkpoints: [String: Data] { state.withLock { $0.checkpoints } }

    /// Every committed page, in commit order.
    public var committedPages: [FetchedPage] { state.withLock { $0.pages } }

    /// How many commits succeeded.
    public var commitCount: Int { state.withLock { $0.pages.count } }
}
