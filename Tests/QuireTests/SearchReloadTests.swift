import Foundation
import Quire
import QuireLMDB  // white-box: reads the posting blocks' sizes
import Testing

/// Loading records that are stored already: those stored byte for byte are left alone (no
/// write, no change feed entry), the others move only the postings of the terms they changed,
/// each touched block written once a batch.
@Suite struct SearchReloadTests {
    /// Notes whose common words make runs long enough for large blocks: `revision` 0 is the
    /// first text; above 0, every third note has a word of its title replaced, a word of its
    /// body dropped and "revised" added.
    static func notesOf(revision: Int, count: Int = 3_000) -> [Note] {
        let words = ["storm", "flood", "rain", "sun", "wind", "snow", "heat", "cold", "fog", "hail"]
        return (0..<count).map { i in
            var title = "\(words[i % 10]) over \(words[(i / 10) % 10]) county"
            var body = "day \(i % 97) of the \(words[(i * 3) % 10]) season in \(words[(i / 7) % 10]) town"
            if revision > 0, i % 3 == 0 {
                title = title.replacingOccurrences(of: "county", with: "revised")
                body = body.replacingOccurrences(of: "season ", with: "")
            }
            return note(String(format: "n%05d", (i * 7_919) % count), title, body, day: i)
        }
    }

    static let queries = [
        "county", "revised", "season", "storm", "\"storm over\"", "fog hail", "revised -county", "day", "town sun",
    ]

    @Test func aReloadWritesOnlyTheRecordsThatChanged() async throws {
        let first = Self.notesOf(revision: 0)
        let second = Self.notesOf(revision: 1)
        try await withNotes([]) { store in
            let options = BulkInsertOptions(chunkSize: 700)
            try await store.bulkInsert(first, into: notes, options: options)
            let loaded = try store.lastChangeSequence()
            // The same records again: nothing to write, and nothing in the change feed.
            try await store.bulkInsert(first.reversed(), into: notes, options: options)
            #expect(try store.lastChangeSequence() == loaded)
            #expect(try Set(ids(store, "revised")).isEmpty)
            // A third of them edited: only those are written.
            try await store.bulkInsert(second, into: notes, options: options)
            #expect(try store.lastChangeSequence() > loaded)
            let events = await collectChanges(
                store.changes(since: loaded), batches: Int(try store.lastChangeSequence() - loaded))
            let written = Set(events.flatMap { event -> [String] in
                guard case .batch(let batch) = event else { return [] }
                return batch.changes.flatMap(\.keys).map(\.description)
            })
            let edited = Set(zip(first, second).filter { $0 != $1 }.map(\.1.id))
            #expect(written == edited)
            #expect(edited.count == 1_000)
            let report = try store.verify()
            #expect(report.isSound, "\(report.problems)")
            // The same postings as an index built from the final records at once.
            try await withNotes([]) { fresh in
                try await fresh.bulkInsert(second, into: notes, options: options)
                for query in Self.queries {
                    #expect(try Set(ids(store, query)) == Set(ids(fresh, query)), "\(query)")
                }
                #expect(report.postings == (try fresh.verify().postings))
            }
            #expect(try Set(ids(store, "revised")) == edited)
        }
    }

    /// A replaced document is tokenized again only in the fields whose text changed: terms that
    /// move between a changed field and one that stayed, terms only the other field has, and a
    /// record whose text did not change at all (its section did) all end as an index built from
    /// the final records at once, by single puts and by bulk loads alike.
    @Test func onlyTheFieldsWhoseTextChangedAreTokenizedAgain() async throws {
        let first = (0..<600).map { i in
            note(String(format: "f%04d", i), "storm \(i % 7) over the bay", "the bay was calm and the storm passed", day: i)
        }
        let second = first.enumerated().map { i, n -> Note in
            switch i % 4 {
            case 0: note(n.id, "calm bay tonight", n.body, day: i)  // title only: "calm" now in both fields
            case 1: note(n.id, n.title, "storm storm over the bay", day: i)  // body only
            case 2: note(n.id, n.title, n.body, section: "Science", day: i)  // no text changed
            default: n
            }
        }
        let queries = ["storm", "calm", "bay", "tonight", "passed", "\"storm storm\"", "\"calm bay\"", "over"]
        let expected = try await withNotes([]) { fresh in
            try await fresh.bulkInsert(second, into: notes)
            return try queries.map { try ids(fresh, $0) }
        }
        #expect(expected.allSatisfy { !$0.isEmpty })
        // Bulk: a load of the edited records over the first ones.
        try await withNotes([]) { store in
            try await store.bulkInsert(first, into: notes)
            try await store.bulkInsert(second.shuffled(), into: notes, options: BulkInsertOptions(chunkSize: 250))
            #expect(try queries.map { try ids(store, $0) } == expected)
            #expect(try store.read { try $0.search("science", in: notes, limit: 10) }.isEmpty)
            let report = try store.verify()
            #expect(report.isSound, "\(report.problems)")
        }
        // One put at a time.
        try await withNotes(first) { store in
            try await store.write { txn in for value in second { try txn.put(value, in: notes) } }
            #expect(try queries.map { try ids(store, $0) } == expected)
            let report = try store.verify()
            #expect(report.isSound, "\(report.problems)")
        }
    }

    /// A term that a batch adds to hundreds of stored documents (a fifth of the index, too few
    /// for the load's end to rewrite the postings): its run is cut into parts no larger than a
    /// block may grow, and a batch that takes the term away again empties and deletes them.
    @Test func aBatchAddingATermToManyDocumentsOfABlockCutsIt() async throws {
        let plain = (0..<4_000).map { i in note(String(format: "d%05d", i), "tide \(i % 10)", "words") }
        let tagged = plain.enumerated().map { i, n in i % 5 == 1 ? note(n.id, n.title + " surge", "words") : n }
        try await withTemporaryStorePath { path in
            do {
                let store = try Store(path: path)
                defer { store.close() }
                try store.register(notes)
                try await store.bulkInsert(plain, into: notes)
                try await store.bulkInsert(tagged.filter { $0.title.hasSuffix("surge") } + [note("d00000", "surge first")],
                    into: notes)
                #expect(try Set(ids(store, "surge")).count == 801)
                #expect(try store.verify().isSound)
            }
            let sizes = try blockSizes(path, term: "surge")
            #expect(sizes.count > 1)
            #expect(sizes.allSatisfy { $0 <= 2_000 })  // leaf-sized: the run is short
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(notes)
            try await store.bulkInsert(plain, into: notes)
            #expect(try ids(store, "surge").isEmpty)
            #expect(try store.verify().isSound)
            store.close()
            #expect(try blockSizes(path, term: "surge").isEmpty)
        }
    }
}

/// The value sizes of `term`'s main posting blocks, in whichever of the two posting databases
/// is in use (a load's end may have switched; the other one is empty).
private func blockSizes(_ path: String, term: String) throws -> [Int] {
    let env = try Environment(path: path)
    defer { env.close() }
    let databases = try ["s:notes:post", "s:notes:post.1"].map { try env.openDatabase($0) }
    let prefix = Array(term.utf8) + [0]
    return try env.read { txn in
        databases.flatMap { database in
            txn.entries(in: database).filter { $0.key.starts(with: prefix) && $0.key.count == prefix.count + 4 }
                .map(\.value.count)
        }
    }
}
