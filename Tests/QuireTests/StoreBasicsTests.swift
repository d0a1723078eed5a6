import Foundation
import Testing
@testable import Quire
import QuireNews

@Suite struct StoreBasicsTests {
    @Test func realisticArticlesRoundTrip() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            let sample = generatedArticles(300)
            for article in sample { try await store.put(article, in: articles) }
            try store.read { snap throws in
                #expect(try snap.count(of: articles) == 300)
                for article in sample.prefix(50) {
                    #expect(try snap.get(.string(article.id), from: articles) == article)
                }
                #expect(try snap.get(.string("missing"), from: articles) == nil)
                let ordered = try snap.values(of: articles).map(\.id)
                #expect(ordered == sample.map(\.id).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
            }
        }
    }

    /// Values that are canonically equivalent (a section `café` composed in one article and
    /// decomposed in another) come back in their own bytes, across a reopen (the stored field
    /// table holds both entries: it was refused as holding a name twice), and verify passes.
    @Test func canonicallyEquivalentValuesKeepTheirBytesAcrossAReopen() async throws {
        try await withTemporaryStorePath { path in
            let composed = Article(id: "one", headline: "h", section: "Caf\u{E9} Society")
            let decomposed = Article(id: "two", headline: "h", section: "Cafe\u{301} Society")
            do {
                let store = try openStore(path)
                try await store.put(composed, in: articles)
                try await store.put(decomposed, in: articles)
                store.close()
            }
            let store = try openStore(path)
            defer { store.close() }
            let read = try store.read { snap in
                [try snap.get(.string("one"), from: articles), try snap.get(.string("two"), from: articles)]
            }
            #expect(read.map { $0.map { Array(($0.section ?? "").utf8) } } == [Array(composed.section!.utf8), Array(decomposed.section!.utf8)])
            let report = try store.verify()
            #expect(report.isSound, "\(report.problems)")
        }
    }

    @Test func upsertUpdatesInsteadOfDuplicating() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            var article = generatedArticles(1)[0]
            try await store.put(article, in: articles)
            article.headline = "Updated headline"
            try await store.put(article, in: articles)
            let updated = article
            let inserted = try await store.write { txn in try txn.insert(updated, in: articles) }
            #expect(!inserted)
            try store.read { snap throws in
                #expect(try snap.count(of: articles) == 1)
                #expect(try snap.get(.string(article.id), from: articles)?.headline == "Updated headline")
            }
        }
    }

    @Test func indexesFollowUpsertsAndDeletes() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            var sample = generatedArticles(40)
            for a in sample { try await store.put(a, in: articles) }
            // Move one article to another section and date; delete another.
            sample[0].section = "Moved"
            sample[0].publishedAt = Date(timeIntervalSince1970: 2_000_000_000)
            try await store.put(sample[0], in: articles)
            try await store.delete(.string(sample[1].id), from: articles)
            let sectionIndex = articles.indexes[1]
            let dateIndex = articles.indexes[0]
            try store.read { snap throws in
                let moved = try snap.keys(in: sectionIndex, of: articles, range: .prefix(.string("Moved")))
                #expect(moved == [.string(sample[0].id)])
                let newest = try snap.values(in: dateIndex, of: articles, reverse: true, limit: 1)
                #expect(newest.first?.id == sample[0].id)
                let all = try snap.keys(in: dateIndex, of: articles)
                #expect(all.count == 39)
                #expect(!all.contains(.string(sample[1].id)))
                // Dates come back in order.
                let dates = try snap.values(in: dateIndex, of: articles).compactMap(\.publishedAt)
                #expect(dates == dates.sorted())
                // The old section no longer lists the moved article.
                if let oldSection = generatedArticles(1)[0].section {
                    let old = try snap.keys(in: sectionIndex, of: articles, range: .prefix(.string(oldSection)))
                    #expect(!old.contains(.string(sample[0].id)))
                }
            }
        }
    }

    @Test func dateRangeScanNewestFirst() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            let sample = generatedArticles(200)
            try await store.bulkInsert(sample, into: articles)
            let from = Date(timeIntervalSince1970: 1_400_000_000)
            let to = Date(timeIntervalSince1970: 1_600_000_000)
            let expected = sample.filter { ($0.publishedAt.map { $0 >= from && $0 < to }) ?? false }
            let found = try store.read { snap throws in
                try snap.values(
                    in: articles.indexes[0], of: articles,
                    range: StoreKeyRange(StoreKey.date(from)..<StoreKey.date(to)), reverse: true)
            }
            #expect(found.count == expected.count)
            #expect(Set(found.map(\.id)) == Set(expected.map(\.id)))
            #expect(found.compactMap(\.publishedAt) == found.compactMap(\.publishedAt).sorted(by: >))
        }
    }

    @Test func lazyFieldReadsAndRawBytes() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            let article = generatedArticles(5).first { ($0.keywords?.count ?? 0) > 0 }!
            try await store.put(article, in: articles)
            try store.read { snap throws in
                let key = StoreKey.string(article.id)
                #expect(try snap.field("headline", of: key, in: articles) == article.headline.map { .string($0) })
                let firstKeyword = try snap.field("keywords.0.value", of: key, in: articles)
                #expect(firstKeyword == .string(article.keywords![0].value))
                #expect(try snap.field("nope", of: key, in: articles) == nil)
                let size = try snap.withRecordBytes(key, in: articles) { $0.byteCount }
                #expect((size ?? 0) > 100)
                let generic = try snap.genericValue(key, inCollectionNamed: "articles")
                #expect(generic?["id"] == .string(article.id))
            }
        }
    }

    @Test func relationsResolveAndSurviveListReplacement() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            let sample = generatedArticles(6)
            let listA = ArticleList(id: "a", title: "A", url: nil, articleDescription: nil, articleIDs: sample.prefix(4).map(\.id))
            try await store.write { txn in
                for a in sample { try txn.put(a, in: articles) }
                try txn.put(listA, in: lists)
                try txn.setMembers(listA.articleIDs.map { .string($0) }, of: .string("a"), in: listMembers)
                try txn.setMembers([.string(sample[0].id)], of: .string("b"), in: listMembers)
            }
            // Replace list a with other members: articles stay, list b still resolves.
            try await store.write { txn in
                try txn.setMembers([.string(sample[5].id)], of: .string("a"), in: listMembers)
            }
            try store.read { snap throws in
                #expect(try snap.members(of: .string("a"), in: listMembers) == [.string(sample[5].id)])
                let b = try snap.members(of: .string("b"), in: listMembers)
                #expect(try b.compactMap { try snap.get($0, from: articles) }.map(\.id) == [sample[0].id])
                #expect(try snap.count(of: articles) == 6)
            }
        }
    }

    @Test func invalidKeysGiveClearErrors() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            var article = generatedArticles(1)[0]
            article.id = ""
            do {
                try await store.put(article, in: articles)
                Issue.record("an empty key must fail")
            } catch let error as StoreError {
                #expect(error.code == .invalidKey)
            }
            // The failure did not poison the writer.
            try await store.put(generatedArticles(1)[0], in: articles)
            #expect(try store.read { try $0.count(of: articles) } == 1)
        }
    }

    @Test func unregisteredCollectionIsAClearError() async throws {
        try await withTemporaryStorePath { path in
            let store = try Store(path: path)
            do {
                try await store.put(Row(id: 1, name: "x", group: 1), in: rows)
                Issue.record("writing an unregistered collection must fail")
            } catch let error as StoreError {
                #expect(error.code == .unknownCollection)
                #expect(error.description.contains("register"))
            }
        }
    }
}
