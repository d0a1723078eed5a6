import Foundation
import Quire
import QuireFetch
import QuireNews
import QuireTestSupport
import Testing

/// A document quarantined once and fetched fine later: the later article stays what a remap
/// leaves (it put the old, quarantined copy back over it).
@Suite struct SupersededRejectTests {
    private let id = "nyt://article/00000000-0000-0000-0000-00000000abcd"

    private func page(_ documents: [String], at time: Date, label: String) throws -> FetchedPage {
        let body = #"{"status":"OK","response":{"docs":["# + documents.joined(separator: ",") + "]}}"
        let parsed = try NYTArticleSearch.parsePage(Array(body.utf8))
        return FetchedPage(
            sourceID: "nyt:test", articles: parsed.articles, rawDocuments: parsed.rawDocuments, rejects: parsed.rejects, pageLabel: label,
            queryTag: "test", checkpoint: Data(label.utf8), fetchedAt: time)
    }

    @Test func aLaterFetchOfTheArticleRetiresItsQuarantinedCopy() async throws {
        try await withTemporaryStore { store in
            let sink = try StoreFetchSink(store: store)
            let old = #"{"_id":"\#(id)","headline":{"main":"Old version"},"pub_date":"not a date"}"#
            let other = #"{"_id":"\#(id)-2","headline":{"main":"Other"},"pub_date":"not a date either"}"#
            let first = try await sink.commit(try page([old, other], at: Date(timeIntervalSince1970: 1_000), label: "page 0"))
            #expect(first.rejects == 2)
            let keys = try store.read { snap in try snap.values(of: StoreFetchSink.rejects).map(\.id) }
            #expect(keys.contains { $0.hasPrefix(id + " ") && $0.utf8.count == id.utf8.count + 33 })

            let new = #"{"_id":"\#(id)","headline":{"main":"New version"},"pub_date":"2020-01-02T03:04:05Z"}"#
            _ = try await sink.commit(try page([new], at: Date(timeIntervalSince1970: 2_000), label: "page 0 again"))
            // The copy of this article is gone; that of the article whose id merely starts the same stays.
            let left = try store.read { snap in try snap.values(of: StoreFetchSink.rejects).map(\.id) }
            #expect(left.count == 1 && left.allSatisfy { $0.hasPrefix(id + "-2 ") })

            let remap = try await sink.remap()
            #expect(remap.remapped == 0 && remap.stillRejected == 1)
            let stored = try store.read { snap in try snap.get(.string(id), from: NewsSchema.articles) }
            #expect(stored?.headline == "New version")
        }
    }

    /// An article changed after a `--keep-raw` fetch stored it (a `quire load` of a corrected
    /// version, a program's `put`) is kept by a remap: it put the older document's mapping back
    /// over it. An article still as the fetch stored it is updated when today's mapping differs.
    @Test func aRemapLeavesAnArticleChangedSinceItsRawCopyWasKept() async throws {
        try await withTemporaryStore { store in
            let fetched = #"{"_id":"\#(id)","headline":{"main":"Fetched"},"pub_date":"2020-01-02T03:04:05Z"}"#
            let other = #"{"_id":"\#(id)-2","headline":{"main":"Other"},"pub_date":"2020-01-02T03:04:05Z"}"#
            let sink = try StoreFetchSink(store: store, retainRawDocuments: true)
            _ = try await sink.commit(try page([fetched, other], at: Date(timeIntervalSince1970: 1_000), label: "page 0"))
            var corrected = try #require(try store.read { snap in try snap.get(.string(id), from: NewsSchema.articles) })
            corrected.headline = "Corrected by load"
            try await store.put(corrected, in: NewsSchema.articles)
            // The other article's kept document stands for a mapping that changed since: its
            // stored article is still the fetch's, so it is updated.
            try await store.write { txn in
                guard var raw = try txn.get(.string(id + "-2"), from: StoreFetchSink.rawDocuments) else { return }
                raw.json = Data(#"{"_id":"\#(id)-2","headline":{"main":"Other, mapped anew"},"pub_date":"2020-01-02T03:04:05Z"}"#.utf8)
                try txn.put(raw, in: StoreFetchSink.rawDocuments)
            }
            let remap = try await sink.remap()
            #expect(remap.rawSuperseded == 1 && remap.rawUpdated == 1 && remap.rawUnchanged == 0, "\(remap)")
            let headlines = try store.read { snap in
                try [id, id + "-2"].map { try snap.get(.string($0), from: NewsSchema.articles)?.headline }
            }
            #expect(headlines == ["Corrected by load", "Other, mapped anew"])
            // Idempotent: the updated one's copy now names what is stored.
            let again = try await sink.remap()
            #expect(again.rawSuperseded == 1 && again.rawUnchanged == 1 && again.rawUpdated == 0, "\(again)")
        }
    }

    /// A raw copy kept by a `--keep-raw` fetch is older than the article a later fetch without
    /// the option stores: it is dropped, so a remap does not put the old version back.
    @Test func aLaterFetchWithoutRawCopiesDropsTheOldRawCopy() async throws {
        try await withTemporaryStore { store in
            let old = #"{"_id":"\#(id)","headline":{"main":"Old version"},"pub_date":"2020-01-02T03:04:05Z"}"#
            let other = #"{"_id":"\#(id)-2","headline":{"main":"Other"},"pub_date":"2020-01-02T03:04:05Z"}"#
            _ = try await StoreFetchSink(store: store, retainRawDocuments: true)
                .commit(try page([old, other], at: Date(timeIntervalSince1970: 1_000), label: "page 0"))
            let new = #"{"_id":"\#(id)","headline":{"main":"New version"},"pub_date":"2020-01-02T03:04:05Z"}"#
            let sink = try StoreFetchSink(store: store)
            _ = try await sink.commit(try page([new], at: Date(timeIntervalSince1970: 2_000), label: "page 0 again"))
            let raw = try store.read { snap in try snap.values(of: StoreFetchSink.rawDocuments).map(\.id) }
            #expect(raw == [id + "-2"])
            let remap = try await sink.remap()
            #expect(remap.rawUpdated == 0 && remap.rawUnchanged == 1, "\(remap)")
            let stored = try store.read { snap in try snap.get(.string(id), from: NewsSchema.articles) }
            #expect(stored?.headline == "New version")
        }
    }

    /// An article fetched again unchanged is counted as such and not written again (no change in
    /// the feed); a changed one is an update; its raw copy stays when it is unchanged.
    @Test func anArticleFetchedAgainUnchangedIsNotWrittenAgain() async throws {
        try await withTemporaryStore { store in
            let a = #"{"_id":"\#(id)","headline":{"main":"A"},"pub_date":"2020-01-02T03:04:05Z"}"#
            let b = #"{"_id":"\#(id)-2","headline":{"main":"B"},"pub_date":"2020-01-02T03:04:05Z"}"#
            let first = try await StoreFetchSink(store: store, retainRawDocuments: true)
                .commit(try page([a, b], at: Date(timeIntervalSince1970: 1_000), label: "page 0"))
            #expect(first.newArticles == 2)
            let sequence = try store.lastChangeSequence()
            let sink = try StoreFetchSink(store: store)
            let again = try await sink.commit(try page([a, b], at: Date(timeIntervalSince1970: 2_000), label: "page 0"))
            #expect(again.unchangedArticles == 2 && again.updatedArticles == 0 && again.newArticles == 0, "\(again)")
            // The commit wrote the checkpoint and the tag, not the articles.
            var feed = store.changes(since: sequence).makeAsyncIterator()
            guard case .batch(let batch)? = await feed.next() else {
                Issue.record("no commit after the refetch")
                return
            }
            #expect(!batch.changes.contains { $0.collection == NewsSchema.articles.name }, "\(batch)")
            #expect(batch.changes.contains { $0.collection == StoreFetchSink.sources.name }, "\(batch)")
            let b2 = #"{"_id":"\#(id)-2","headline":{"main":"B, revised"},"pub_date":"2020-01-02T03:04:05Z"}"#
            let revised = try await sink.commit(try page([a, b2], at: Date(timeIntervalSince1970: 3_000), label: "page 0"))
            #expect(revised.unchangedArticles == 1 && revised.updatedArticles == 1, "\(revised)")
            let raw = try store.read { snap in try snap.values(of: StoreFetchSink.rawDocuments).map(\.id) }
            #expect(raw == [id])
        }
    }

    /// A replica writes several pages of the log in one transaction: a page that quarantines an
    /// article and a later one that stores it leave no reject, as written one at a time; the
    /// other order keeps it (the reject is newer).
    @Test func pagesWrittenTogetherRetireCopiesAsIfWrittenInTurn() async throws {
        try await withTemporaryStore { store in
            _ = try StoreFetchSink(store: store)
            let bad = #"{"_id":"\#(id)","headline":{"main":"Bad"},"pub_date":"not a date"}"#
            let good = #"{"_id":"\#(id)","headline":{"main":"Good"},"pub_date":"2020-01-02T03:04:05Z"}"#
            func rejects(_ pages: [FetchedPage]) async throws -> [String] {
                try await store.write { txn in
                    for old in try txn.values(of: StoreFetchSink.rejects) { try txn.delete(.string(old.id), from: StoreFetchSink.rejects) }
                    _ = try StoreFetchSink.write(
                        pages: pages.map { ($0, $0.rejects.map { RejectedDocument($0, of: pages[0]) }) }, retainRawDocuments: false, in: txn)
                }
                return try store.read { snap in try snap.values(of: StoreFetchSink.rejects).map(\.id) }
            }
            let at = Date(timeIntervalSince1970: 1_000)
            #expect(try await rejects([try page([bad], at: at, label: "p0"), try page([good], at: at, label: "p1")]).isEmpty)
            let kept = try await rejects([try page([good], at: at, label: "p0"), try page([bad], at: at, label: "p1")])
            #expect(kept.count == 1 && kept.allSatisfy { $0.hasPrefix(id + " ") })
        }
    }

    @Test func aDocumentWithoutAnIdKeepsAPlainHash() throws {
        #expect(ArticleIdentity.id(ofDocument: Array(#"{"headline":"x"}"#.utf8), mapping: "nyt") == nil)
        #expect(ArticleIdentity.id(ofDocument: Array(#"{"_id":"","uri":"u"}"#.utf8), mapping: "nyt") == "u")
        #expect(ArticleIdentity.id(ofDocument: Array(#""bare""#.utf8), mapping: "nyt") == nil)
        let story = #"{"url":"http://news.feedzilla.com/en_us/stories/top-news/42?client_source=api","publish_date":5}"#
        #expect(ArticleIdentity.id(ofDocument: Array(story.utf8), mapping: "feedzilla") == "feedzilla:42")
    }
}
