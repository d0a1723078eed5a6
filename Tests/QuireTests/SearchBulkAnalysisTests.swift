import Foundation
import QuireText
import Testing
@testable import Quire
import QuireNews
import QuireTestSupport

/// The full-text index a bulk load builds is the same whichever way its chunks were tokenized:
/// from the values as they were encoded (an array in key order), from pieces joined into one
/// chunk (pieces submitted in key order), or from the records decoded back (chunks held and merged,
/// keys in random order).
@Suite struct SearchBulkAnalysisTests {
    private static let values: [Note] = generatedArticles(1_500, seed: 29).enumerated().map { i, article in
        note(String(format: "k%05d", i), article.headline ?? "", (article.abstract ?? "") + " " + (article.snippet ?? ""),
             section: i % 3 == 0 ? "Science" : "World", day: i)
    }

    private func answers(_ store: Store, _ queries: [String]) throws -> [[String]] {
        try store.read { snap in
            try queries.map { query in
                try snap.search(query, in: notes, limit: 40).map { "\($0.key) \(($0.score * 1e6).rounded())" }
            }
        }
    }

    @Test func theIndexIsTheSameFromValuesFromJoinedPiecesAndFromDecodedRecords() async throws {
        let values = Self.values
        let words = values.prefix(20).compactMap { $0.title.split(separator: " ").first.map { $0.filter(\.isLetter) } }
            .filter { !$0.isEmpty }
        let phrase = values[7].title.split(separator: " ").prefix(2).map { $0.filter { $0.isLetter } }.joined(separator: " ")
        let queries = words + ["\(words[0]) \(words[1])", "\(words[2]) OR \(words[3])", "\"\(phrase)\""]
        // One put at a time: the reference.
        let expected = try await withNotes([]) { store in
            try await store.write { txn in for value in values { try txn.put(value, in: notes) } }
            #expect(try store.verify().isSound)
            return try answers(store, queries)
        }
        #expect(expected.contains { !$0.isEmpty })
        let options = BulkInsertOptions(chunkSize: 700)
        let ways: [(String, (Store) async throws -> BulkInsertReport)] = [
            ("array in key order", { try await $0.bulkInsert(values, into: notes, options: options) }),
            ("pieces in key order", {
                // Pieces of 300 gathered into chunks of 700 or more (three pieces, joined).
                try await $0.withBulkLoader(into: notes, options: options) { loader in
                    for start in stride(from: 0, to: values.count, by: 300) {
                        try await loader.submit(values[start..<min(values.count, start + 300)])
                    }
                }
            }),
            ("array in random order", { try await $0.bulkInsert(values.shuffled(), into: notes, options: options) }),
            ("pieces in key order, then out of order", {
                // The ordered pieces staged (with their analyses) join the merge when the order breaks.
                try await $0.withBulkLoader(into: notes, options: options) { loader in
                    try await loader.submit(values[0..<300])
                    try await loader.submit(values[300..<600])
                    try await loader.submit(Array(values[600...].shuffled()))
                }
            }),
        ]
        for (way, insert) in ways {
            try await withNotes([]) { store in
                let report = try await insert(store)
                #expect(report.records == values.count, "\(way)")
                #expect(try store.verify().isSound, "\(way)")
                #expect(try answers(store, queries) == expected, "\(way)")
            }
        }
    }

    /// A load commits a chunk a transaction, into a collection with a full-text index (with the
    /// index and answers of one put at a time) as into one without.
    @Test func chunksCommitOneATransaction() async throws {
        let values = Self.values
        let words = values.prefix(12).compactMap { $0.title.split(separator: " ").first.map { $0.filter(\.isLetter) } }
            .filter { !$0.isEmpty }
        let queries = words + ["\(words[0]) OR \(words[1])"]
        let expected = try await withNotes([]) { store in
            try await store.write { txn in for value in values { try txn.put(value, in: notes) } }
            return try answers(store, queries)
        }
        try await withNotes([]) { store in
            let report = try await store.bulkInsert(values, into: notes, options: BulkInsertOptions(chunkSize: 150))
            #expect(report.records == values.count)
            #expect(report.chunks == 10)
            #expect(report.transactions == 10)
            #expect(try store.verify().isSound)
            #expect(try answers(store, queries) == expected)
            #expect(try store.read { try $0.count(of: notes) } == values.count)
        }
        let plain = StoreCollection<Note>(name: "plain", key: { .string($0.id) })
        try await withTemporaryStorePath { path in
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(plain)
            let report = try await store.bulkInsert(values, into: plain, options: BulkInsertOptions(chunkSize: 150))
            #expect(report.chunks == 10)
            #expect(report.transactions == 10)
            #expect(try store.read { try $0.count(of: plain) } == values.count)
        }
    }

    @Test func piecesJoinIntoPartsThatCoverTheChunkInOrder() async throws {
        let values = Self.values.prefix(900)
        try await withNotes([]) { store in
            let first = try store.encodeChunk(values.prefix(400), notes, sort: true, previous: nil)
            let second = try store.encodeChunk(values.dropFirst(400), notes, sort: true, previous: first.fields)
            let parts = try #require(SearchBatchPart.joined([first.searchParts, second.searchParts], counts: [400, 500]))
            #expect(parts.map(\.range) == ((first.searchParts ?? []) + (second.searchParts ?? [])).map(\.range).enumerated().map {
                $0.offset < (first.searchParts?.count ?? 0) ? $0.element : ($0.element.lowerBound + 400)..<($0.element.upperBound + 400)
            })
            #expect(parts.first?.range.lowerBound == 0 && parts.last?.range.upperBound == 900)
            #expect(zip(parts, parts.dropFirst()).allSatisfy { $0.range.upperBound == $1.range.lowerBound })
            // A piece without its analysis (its keys did not ascend) leaves the joined chunk to the writer.
            let shuffled = try store.encodeChunk(values.shuffled()[...], notes, sort: true, previous: nil)
            #expect(shuffled.searchParts == nil)
            #expect(SearchBatchPart.joined([first.searchParts, shuffled.searchParts], counts: [400, 900]) == nil)
        }
    }

    /// A chunk's records stored already byte for byte are left out of its analysis (a reload);
    /// when one of them changes before the chunk is written, the writer tokenizes the chunk
    /// again, so the chunk's record is indexed with its own text all the same.
    @Test func recordsStoredAlreadyAreLeftOutOfTheAnalysisUntilTheyChange() async throws {
        let values = Array(Self.values.prefix(600))
        try await withNotes([]) { store in
            try await store.bulkInsert(values, into: notes)
            var edited = values
            edited[10].title += " zeppelin"
            let chunk = try store.encodeChunk(edited[...], notes, sort: true, previous: nil)
            let skipped = try #require(chunk.searchSkipped)
            #expect(skipped.indices.filter { !skipped[$0] } == [10])
            // Only the edited note was tokenized: its postings are the only ones.
            let parts = try #require(chunk.searchParts)
            let tokenized = Set(parts.flatMap { part in part.termDocuments.map { part.range.lowerBound + Int($0) } })
            #expect(tokenized == [10])
            // Before the chunk is written, a note it left out changes: it is tokenized again.
            var other = values[20]
            other.title = "ornithopter"
            try await store.put(other, in: notes)
            #expect(try ids(store, "ornithopter") == [other.id])
            _ = try await store.writer.run { try store.writeChunks([chunk], notes) }
            #expect(try ids(store, "zeppelin") == [values[10].id])
            #expect(try ids(store, "ornithopter").isEmpty)
            let word = try #require(values[20].title.split(separator: " ").map { $0.filter(\.isLetter) }.first { $0.count > 3 })
            #expect(try ids(store, String(word)).contains(values[20].id))
            let report = try store.verify()
            #expect(report.isSound, "\(report.problems)")
        }
        // Into a new store, nothing is looked up or left out.
        try await withNotes([]) { store in
            let chunk = try store.encodeChunk(values[...], notes, sort: true, previous: nil)
            #expect(chunk.searchSkipped == nil)
        }
    }

    /// What a part keeps, comparable: its terms and its term-ordered postings.
    private func contents(_ parts: [SearchBatchPart]) -> [[String]] {
        parts.map { part in
            (0..<part.termCount).map { k in
                let postings = part.termSlots(k).map { "\(part.termDocuments[$0]):\(Array(part.groups(ofSlot: $0)))" }
                return String(decoding: part.term(k), as: UTF8.self) + " " + postings.joined(separator: ",")
            } + [part.lengths.map(String.init).joined(separator: ",")]
        }
    }

    @Test func partsAnalysedInReusedArraysEqualPartsAnalysedInFreshOnes() {
        let texts: @Sendable (Int) -> [SearchText] = { [SearchText(field: 0, Self.values[$0].title), SearchText(field: 1, Self.values[$0].body)] }
        let short: @Sendable (Int) -> [SearchText] = { [SearchText(field: 0, Self.values[$0].title)] }
        let buffers = SearchAnalysisBuffers()
        // A large analysis first, its parts dropped: their arrays go back to the pool, longer than
        // the next ones need.
        _ = SearchBatchPart.analyse(count: 1_500, parts: 2, buffers: buffers, rules: TokenizerOptions(), texts)
        let reused = SearchBatchPart.analyse(count: 600, parts: 2, buffers: buffers, rules: TokenizerOptions(), short)
        let fresh = SearchBatchPart.analyse(count: 600, parts: 2, rules: TokenizerOptions(), short)
        #expect(reused.count == 2)
        #expect(contents(reused) == contents(fresh))
        // The postings regrouped by document, in slices: each document's in term order, every
        // posting of the part exactly once.
        for part in reused {
            var byTerm: [Int: [String]] = [:]
            for k in 0..<part.termCount {
                for slot in part.termSlots(k) {
                    byTerm[Int(part.termDocuments[slot]), default: []].append(
                        String(decoding: part.term(k), as: UTF8.self) + ":\(Array(part.groups(ofSlot: slot)))")
                }
            }
            var documents = SearchDocumentTermSlice()
            let sizes = part.documentSizes()
            var seen = 0
            for start in stride(from: 0, to: part.range.count, by: 128) {
                let slice = start..<min(part.range.count, start + 128)
                part.documentTerms(slice, sizes: sizes, into: &documents)
                #expect(documents.count == slice.count)
                for j in slice {
                    let listed = documents.withDocument(j - start) { terms in
                        (0..<terms.count).map {
                            String(decoding: terms.term($0), as: UTF8.self) + ":\(Array(terms.groups($0)))"
                        }
                    }
                    #expect(listed == byTerm[j] ?? [])
                    seen += listed.count
                }
            }
            #expect(seen == part.termDocuments.count)
        }
    }
}
