import Foundation
import QuireText
import Testing
@testable import Quire
import QuireLMDB  // white-box: changes the store under the index

/// Verify checks a full-text index by each document's stored check (the digest of its postings
/// and the checksum of its text) and tokenizes only the records whose text changed: these tests
/// make sure that shortcut still finds what tokenizing every record found, and invents nothing.
@Suite struct SearchDocumentCheckTests {
    /// Notes whose index has no field paths: verify cannot recompute their text.
    static let pathless = StoreCollection<Note>(name: "pathless", key: { .string($0.id) }).searchable(
        StoreSearchIndex(fields: [StoreSearchField(name: "title", id: 0, weight: 1)]) { [SearchText(field: 0, $0.title)] })

    /// Notes whose text closure gives the title in capitals: its bytes differ from the path's,
    /// its terms do not (terms are folded to lower case).
    static let shouting = StoreCollection<Note>(name: "shouting", key: { .string($0.id) }).searchable(
        StoreSearchIndex(fields: [StoreSearchField(name: "title", id: 0, weight: 1, path: "title")]) {
            [SearchText(field: 0, $0.title.uppercased())]
        })

    @Test func theCheckIsTheDigestOfThePostingsAndTheChecksumOfTheText() {
        var analyzer = SearchAnalyzer(options: TokenizerOptions())
        let texts = [SearchText(field: 0, "Storm surge"), SearchText(field: 1, "the storm came")]
        let document = analyzer.analyze(texts)
        var sorted = SearchDocumentTerms()
        analyzer.analyze(texts, into: &sorted)
        let check = SearchDocumentCheck(SearchPostingDigest(sorted), texts: texts)
        // The same postings read one by one (in the order of first appearance), as verify reads
        // them from the blocks.
        var seen = SearchPostingDigest()
        for (term, groups) in zip(document.terms, document.values) {
            term.withUnsafeBytes { t in groups.withUnsafeBytes { seen.add(term: t, groups: $0) } }
        }
        let stored = check.stored(withText: true)
        #expect(SearchPostingDigest(stored: stored ^ SearchDocumentCheck.textChecksum(texts)).matches(seen))
        #expect(SearchPostingDigest(stored: check.stored(withText: false)).matches(seen))
        var missing = SearchPostingDigest()
        for (term, groups) in zip(document.terms.dropFirst(), document.values.dropFirst()) {
            term.withUnsafeBytes { t in groups.withUnsafeBytes { missing.add(term: t, groups: $0) } }
        }
        #expect(!SearchPostingDigest(stored: stored ^ check.text).matches(missing))
        // Another text does not check; fields in another order do, pieces of one field swapped do not.
        let other = SearchDocumentCheck.textChecksum([SearchText(field: 0, "Storm surge!"), texts[1]])
        #expect(!SearchPostingDigest(stored: stored ^ other).matches(seen))
        #expect(SearchDocumentCheck.textChecksum(texts.reversed()) == check.text)
        let pieces = [SearchText(field: 1, "a"), SearchText(field: 1, "b")]
        #expect(SearchDocumentCheck.textChecksum(pieces) != SearchDocumentCheck.textChecksum(pieces.reversed()))
        var bytes: [UInt8] = []
        SearchDocumentCheck.append(stored, to: &bytes)
        #expect(bytes.count == SearchDocumentCheck.byteCount)
        #expect(bytes.withUnsafeBytes { SearchDocumentCheck.read($0, at: 0) } == stored)
        #expect(bytes.withUnsafeBytes { SearchDocumentCheck.read($0, at: 1) } == nil)
    }

    /// Two records' bytes swapped under the index (each still a sound record): their texts no
    /// longer have the checksums they were indexed with, so verify tokenizes them and names both.
    @Test func aRecordChangedBehindTheIndexIsFound() async throws {
        try await withTemporaryStorePath { path in
            try await Self.storeTwoNotes(path)
            try Self.swapTheTwoRecords(path)
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(notes)
            let report = try store.verify()
            #expect(report.problems.contains { $0.contains("record a: no posting for 'quiet'") }, "\(report.problems)")
            #expect(report.problems.contains { $0.contains("record b: no posting for 'storm'") }, "\(report.problems)")
        }
    }

    /// A stored check damaged sends its document to the full comparison, which finds its
    /// postings right (a check is a shortcut, not something the index answers with); with a
    /// posting of that document gone too, the document is named.
    @Test func aDamagedCheckIsRecheckedNotReported() async throws {
        try await withTemporaryStorePath { path in
            try await Self.storeTwoNotes(path)
            try Self.damageTheCheck(path, ofKeyEnding: "b")
            do {
                let store = try Store(path: path)
                defer { store.close() }
                try store.register(notes)
                let report = try store.verify()
                #expect(report.isSound, "\(report.problems)")
            }
            try Self.deletePostings(path, "s:notes:post", of: "harbour")
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(notes)
            let report = try store.verify()
            #expect(report.problems.contains { $0.contains("record b: no posting for 'harbour'") }, "\(report.problems)")
            #expect(!report.problems.contains { $0.contains("record a") }, "\(report.problems)")
        }
    }

    /// Without field paths verify cannot tokenize a record, but the stored digest still finds a
    /// posting taken away (an index of the older layout could not tell).
    @Test func aMissingPostingIsFoundWithoutFieldPaths() async throws {
        try await withTemporaryStorePath { path in
            do {
                let store = try Store(path: path)
                try store.register(Self.pathless)
                try await store.put(note("a", "storm surge"), in: Self.pathless)
                try await store.put(note("b", "storm tide"), in: Self.pathless)
                #expect(try store.verify().isSound)
                store.close()
            }
            try Self.deletePostings(path, "s:pathless:post", of: "surge")
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(Self.pathless)
            let report = try store.verify()
            #expect(report.problems.contains { $0.contains("record a: its postings differ") }, "\(report.problems)")
            #expect(!report.problems.contains { $0.contains("record b") }, "\(report.problems)")
        }
    }

    /// A text closure whose bytes differ from the fields' paths' (here in capitals) makes every
    /// checksum differ: those records are tokenized, as before checks were stored, which finds no
    /// problem in a sound index and still finds a posting taken away.
    @Test func aTextClosureThatDiffersFromThePathsIsTokenizedNotReported() async throws {
        try await withTemporaryStorePath { path in
            let count = 3_000  // more than one batch of records tokenized together
            do {
                let store = try Store(path: path)
                try store.register(Self.shouting)
                let values = (0..<count).map { note("n\($0)", "storm " + SearchVerifyBatchTests.word($0)) }
                try await store.write { try $0.put(contentsOf: values, in: Self.shouting) }
                let report = try store.verify()
                #expect(report.isSound, "\(report.problems.prefix(3))")
                #expect(report.postings == 2 * count)
                store.close()
            }
            try Self.deletePostings(path, "s:shouting:post", of: SearchVerifyBatchTests.word(1234))
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(Self.shouting)
            let report = try store.verify()
            #expect(report.problems.contains { $0.contains("record n1234: no posting for") }, "\(report.problems)")
            #expect(report.problems.allSatisfy { $0.contains("n1234") || $0.contains("postings, the documents list") }, "\(report.problems)")
        }
    }

    /// A store at `path` holding notes "a" (storm surge) and "b" (quiet harbour), verified sound.
    static func storeTwoNotes(_ path: String) async throws {
        let store = try Store(path: path)
        defer { store.close() }
        try store.register(notes)
        try await store.put(note("a", "storm surge"), in: notes)
        try await store.put(note("b", "quiet harbour"), in: notes)
        #expect(try store.verify().isSound)
    }

    static func swapTheTwoRecords(_ path: String) throws {
        let env = try Environment(path: path)
        defer { env.close() }
        let records = try env.openDatabase("c:notes")
        try env.write { txn in
            let entries = txn.entries(in: records).map { ($0.keyBytes, $0.valueBytes) }
            #expect(entries.count == 2)
            try txn.put(entries[1].1, forKey: entries[0].0, in: records)
            try txn.put(entries[0].1, forKey: entries[1].0, in: records)
        }
    }

    /// Flips a bit of the check of the `num` entry whose key ends with `last`.
    static func damageTheCheck(_ path: String, ofKeyEnding last: Character) throws {
        let env = try Environment(path: path)
        defer { env.close() }
        let numbers = try env.openDatabase("s:notes:num")
        try env.write { txn in
            let entry = try #require(txn.entries(in: numbers).first { $0.valueBytes.last == last.asciiValue })
            var value = entry.valueBytes
            value[2] ^= 0x40  // two lengths (one byte each), then the check (4 bytes)
            try txn.put(value, forKey: entry.keyBytes, in: numbers)
        }
    }

    /// Deletes every posting block of `term`.
    static func deletePostings(_ path: String, _ database: String, of term: String) throws {
        let env = try Environment(path: path)
        defer { env.close() }
        let postings = try env.openDatabase(database)
        try env.write { txn in
            let prefix = Array(term.utf8) + [0]
            let keys = txn.entries(in: postings).map(\.keyBytes).filter { $0.starts(with: prefix) }
            #expect(!keys.isEmpty)
            for key in keys { _ = try txn.delete(key, in: postings) }
        }
    }
}
