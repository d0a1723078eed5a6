import Foundation
import Quire
import QuireNews
import Testing

@Suite struct BulkInsertChunkTests {
    /// Articles whose section (an interned value) is new in every chunk of `chunk`, so that each chunk
    /// brings field-table entries the previous chunk's commit may not have written yet.
    private func articlesWithNewSectionsPerChunk(_ count: Int, chunk: Int) -> [Article] {
        generatedArticles(count, seed: 11).enumerated().map { index, article in
            var article = article
            article.section = "Section \(index / chunk) ✓"
            return article
        }
    }

    @Test(arguments: [true, false]) func chunksBringingNewValuesReadBackAfterReopen(sorted: Bool) async throws {
        try await withTemporaryStorePath { path in
            let sample = articlesWithNewSectionsPerChunk(600, chunk: 50)
            let input = sorted ? sample.sorted { $0.id < $1.id } : sample
            do {
                let store = try openStore(path)
                let report = try await store.bulkInsert(input, into: articles, options: BulkInsertOptions(chunkSize: 50))
                #expect(report.records == 600)
                #expect(report.chunks == 12)
                let read = try store.read { snap throws in try input.map { try snap.get(.string($0.id), from: articles) } }
                #expect(read == input.map { Optional($0) })
            }
            let reopened = try openStore(path)
            let read = try reopened.read { snap throws in try input.map { try snap.get(.string($0.id), from: articles) } }
            #expect(read == input.map { Optional($0) })
            #expect(try reopened.read { snap throws in try snap.count(of: articles) } == 600)
        }
    }

    @Test func aSliceInsertsExactlyItsElements() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            let sample = generatedArticles(400, seed: 12)
            let report = try await store.bulkInsert(sample[100..<300], into: articles, options: BulkInsertOptions(chunkSize: 64))
            #expect(report.records == 200)
            let present = try store.read { snap throws in try sample.map { try snap.contains(.string($0.id), in: articles) } }
            #expect(present == sample.indices.map { (100..<300).contains($0) })
        }
    }

    /// `chunkSize: .max` says "no limit": a slice that does not start at 0 overflowed
    /// `start + chunkSize` and trapped.
    @Test func aSliceWithNoChunkLimitInsertsItsElements() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            let sample = generatedArticles(50, seed: 14)
            let report = try await store.bulkInsert(sample.dropFirst(10), into: articles, options: BulkInsertOptions(chunkSize: .max))
            #expect(report.records == 40)
            #expect(try store.read { try $0.count(of: articles) } == 40)
        }
    }

    @Test func theLastValueForARepeatedKeyWins() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            let sample = generatedArticles(120, seed: 13)
            var repeated = sample
            for index in stride(from: 0, to: 120, by: 3) {
                var changed = sample[index]
                changed.headline = "second version \(index)"
                repeated.append(changed)
            }
            // One unsorted chunk: sorting it must keep the later value of a key after the earlier one.
            try await store.bulkInsert(repeated, into: articles, options: BulkInsertOptions(chunkSize: 1000))
            let headlines = try store.read { snap throws in try sample.map { try snap.get(.string($0.id), from: articles)?.headline } }
            for (index, headline) in headlines.enumerated() {
                #expect(headline == (index % 3 == 0 ? "second version \(index)" : sample[index].headline))
            }
        }
    }
}
