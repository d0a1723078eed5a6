import Foundation
import Testing
@testable import Quire
import QuireLMDB  // white-box: reaches under the store on purpose
import QuireNews

@Suite struct StoreVerifyTests {
    @Test func soundStorePassesAndDamageIsFound() async throws {
        try await withTemporaryStorePath { path in
            let sample = generatedArticles(120)
            do {
                let store = try openStore(path)
                try await store.bulkInsert(sample, into: articles)
                try await store.write { txn in
                    try txn.setMembers(sample.prefix(3).map { .string($0.id) }, of: .string("l"), in: listMembers)
                }
                let report = try store.verify()
                #expect(report.isSound, "\(report.problems)")
                #expect(report.records == 120)
                #expect(report.indexEntries == sample.filter { $0.publishedAt != nil }.count + sample.filter { $0.section != nil }.count)
                #expect(report.relationEntries == 3)
                store.close()
            }
            // Damage: remove one record behind the indexes' back, and point a relation nowhere.
            try damage(path, sample[5].id)
            let store = try Store(path: path)
            let report = try store.verify()
            #expect(!report.isSound)
            #expect(report.problems.contains { $0.contains("points to missing record \(sample[5].id)") })
            #expect(report.problems.contains { $0.contains("member nowhere does not exist") })
        }
    }
}

extension StoreVerifyTests {
    /// Thousands of records (verify decodes them in batches on every core): entries planted in
    /// and taken out of a section index, whose few keys each hold thousands of records, are found
    /// and named — the entry moved to another section by its wrong key too — and nothing else is.
    @Test func badIndexEntriesInALargeStoreAreNamed() async throws {
        try await withTemporaryStorePath { path in
            let sample = generatedArticles(5_000).filter { $0.section != nil }
            let sections = Set(sample.compactMap(\.section)).sorted()
            try #require(sections.count >= 2)
            let lost = sample[4_321 % sample.count]
            let moved = sample[17]
            let elsewhere = sections.first { $0 != moved.section }!
            do {
                let store = try openStore(path)
                try await store.bulkInsert(sample, into: articles)
                let report = try store.verify()
                #expect(report.isSound, "\(report.problems)")
                #expect(report.records == sample.count)
                store.close()
            }
            #expect(try damageSectionIndex(path, lost: lost, moved: moved, to: elsewhere, ghostIn: sections[0]) == [true, true])
            let store = try Store(path: path)
            let report = try store.verify()
            #expect(report.records == sample.count)
            #expect(
                Set(report.problems) == [
                    "articles: record \(lost.id): missing from index 'section'",
                    "articles: record \(moved.id): missing from index 'section'",
                    "articles: index 'section' points to missing record ghost",
                    "articles: index 'section' has \(elsewhere) for record \(moved.id), which implies \(moved.section!)",
                ], "\(report.problems)")
        }
    }
}

extension StoreVerifyTests {
    /// An index and its records are written in one transaction: an entry whose record is missing
    /// is damage, and a walk in the index's order stops on it (it was left out, and `dump
    /// --section` lost the record with status 0), as `verify` names it.
    @Test func aWalkByAnIndexStopsAtAnEntryWhoseRecordIsMissing() async throws {
        try await withTemporaryStorePath { path in
            let sample = generatedArticles(300).filter { $0.section != nil }
            let sections = Set(sample.compactMap(\.section)).sorted()
            try #require(sections.count >= 2)
            do {
                let store = try openStore(path)
                try await store.bulkInsert(sample, into: articles)
                store.close()
            }
            let moved = sample[2]
            let elsewhere = sections.first { $0 != moved.section }!
            #expect(try damageSectionIndex(path, lost: sample[1], moved: moved, to: elsewhere, ghostIn: sections[0]) == [true, true])
            let store = try Store(path: path)
            defer { store.close() }
            #expect {
                try store.read { snap in
                    try snap.forEachJSON(inCollectionNamed: "articles", byIndex: "section", range: .exactly(.string(sections[0]))) { _, _ in true }
                }
            } throws: { error in
                (error as? StoreError)?.code == .corrupted && "\(error)".contains("names record ghost")
            }
            // Another section's walk reads as before.
            let other = try store.read { snap in
                var count = 0
                try snap.forEachJSON(inCollectionNamed: "articles", byIndex: "section", range: .exactly(.string(sections[1]))) { _, _ in
                    count += 1
                    return true
                }
                return count
            }
            #expect(other > 0)
            // So does a typed read of the index's values (it left the record out, and counted it
            // against the limit).
            #expect {
                try store.read { snap in try snap.values(in: articles.indexes[1], of: articles, range: .exactly(.string(sections[0]))) }
            } throws: { error in
                (error as? StoreError)?.code == .corrupted && "\(error)".contains("names record ghost")
            }
            #expect(try store.read { snap in try snap.values(in: articles.indexes[1], of: articles, range: .exactly(.string(sections[1]))) }.count == other)
        }
    }
}

private func damage(_ path: String, _ id: String) throws {
    let env = try Environment(path: path)
    defer { env.close() }
    let records = try env.openDatabase("c:articles")
    let relation = try env.openDatabase("r:list-articles", flags: [.create, .duplicateSort])
    try env.write { txn in
        try txn.delete(Array(id.utf8), in: records)
        try txn.put(Array("nowhere".utf8), forKey: Array("l".utf8), in: relation)
    }
}

/// Takes `lost`'s and `moved`'s entries out of the section index, puts `moved` under another
/// section, and a record that does not exist under `ghostIn`; returns whether each removal found its entry.
private func damageSectionIndex(_ path: String, lost: Article, moved: Article, to elsewhere: String, ghostIn: String) throws
    -> [Bool]
{
    let env = try Environment(path: path)
    defer { env.close() }
    let index = try env.openDatabase("i:articles:section", flags: [.duplicateSort])
    return try env.write { txn in
        let removed = [
            try txn.delete(StoreKey.string(lost.section!).bytes, value: Array(lost.id.utf8), in: index),
            try txn.delete(StoreKey.string(moved.section!).bytes, value: Array(moved.id.utf8), in: index),
        ]
        try txn.put(Array(moved.id.utf8), forKey: StoreKey.string(elsewhere).bytes, in: index)
        try txn.put(Array("ghost".utf8), forKey: StoreKey.string(ghostIn).bytes, in: index)
        return removed
    }
}
