import Testing
import QuireText

private func randomPostings(_ rng: inout TestRandom, count: Int, gap: Int) -> [Posting] {
    var document: UInt32 = UInt32(rng.below(3))
    var out: [Posting] = []
    for _ in 0..<count {
        var occurrences: [Occurrence] = []
        for field in UInt8(0)..<16 where rng.below(5) == 0 || (field == 15 && occurrences.isEmpty) {
            var position = UInt32(rng.below(300))
            for _ in 0...rng.below(4) {
                occurrences.append(Occurrence(field: field, position: position))
                position += UInt32(1 + rng.below(2000))
            }
        }
        out.append(Posting(document: document, occurrences: occurrences))
        document += UInt32(1 + rng.below(gap))
    }
    return out
}

extension PostingCursor {
    /// The current document's occurrences through `readOccurrences(into:from:)`, first into a
    /// buffer too small for them when there are several (which must leave the cursor as it was).
    mutating func readAllOccurrences() throws -> [Occurrence] {
        var small = [Occurrence](repeating: Occurrence(field: 0, position: 0), count: 1)
        let fitted = try small.withUnsafeMutableBufferPointer { try readOccurrences(into: $0, from: 0) }
        if let fitted { return Array(small[..<fitted]) }
        var large = [Occurrence](repeating: Occurrence(field: 0, position: 0), count: 4096)
        let end = try large.withUnsafeMutableBufferPointer { try readOccurrences(into: $0, from: 3) }
        return Array(large[3..<(end ?? 3)])
    }
}

@Suite struct PostingListTests {
    @Test func roundTripsAcrossBlockSizes() throws {
        var rng = TestRandom(seed: 5)
        for (count, blockSize) in [(0, 128), (1, 128), (127, 128), (128, 128), (129, 128), (1000, 128), (300, 1), (77, 7)] {
            let postings = randomPostings(&rng, count: count, gap: 1 + rng.below(5000))
            let bytes = PostingListEncoder.encode(postings, blockSize: blockSize)
            #expect(try PostingCursor.decodeAll(bytes) == postings, "count \(count), block \(blockSize)")
        }
    }

    @Test func extremeValuesRoundTrip() throws {
        let postings = [
            Posting(document: 0, occurrences: [Occurrence(field: 0, position: 0)]),
            Posting(document: 1, occurrences: [Occurrence(field: 15, position: UInt32.max)]),
            Posting(document: UInt32.max, occurrences: (0..<100).map { Occurrence(field: 3, position: UInt32($0)) }),
        ]
        #expect(try PostingCursor.decodeAll(PostingListEncoder.encode(postings, blockSize: 2)) == postings)
    }

    @Test func encoderIsReusableAcrossTerms() throws {
        var encoder = PostingListEncoder()
        var first: [UInt8] = []
        encoder.append(document: 5, occurrences: [Occurrence(field: 1, position: 2)])
        encoder.finish(into: &first)
        var second: [UInt8] = []
        encoder.append(document: 3, occurrences: [Occurrence(field: 0, position: 9)])
        encoder.finish(into: &second)
        #expect(try PostingCursor.decodeAll(first) == [Posting(document: 5, occurrences: [Occurrence(field: 1, position: 2)])])
        #expect(try PostingCursor.decodeAll(second) == [Posting(document: 3, occurrences: [Occurrence(field: 0, position: 9)])])
    }

    @Test func commonPostingsAreSmall() {
        // Dense documents, one occurrence each at a small position: delta, header, position = 3 bytes;
        // the list header (count 2 bytes, blocks 1) and 20 skip entries (64 documents a block) of
        // 2 + 2 bytes.
        let postings = (0..<1280).map { Posting(document: UInt32($0 * 3), occurrences: [Occurrence(field: 1, position: 7)]) }
        let bytes = PostingListEncoder.encode(postings)
        #expect(bytes.count == 1280 * 3 + 3 + 20 * 4)
    }

    @Test func advanceSkipsBlocksAndFindsTheFirstDocumentAtOrAfterTheTarget() throws {
        var rng = TestRandom(seed: 9)
        let postings = randomPostings(&rng, count: 5000, gap: 40)
        let documents = postings.map(\.document)
        let bytes = PostingListEncoder.encode(postings, blockSize: 64)
        try bytes.withUnsafeBytes { raw in
            var cursor = try PostingCursor(raw)
            #expect(cursor.documentCount == 5000)
            var target: UInt32 = 0
            while true {
                let got = try cursor.advance(to: target)
                let want = documents.first { $0 >= target }
                #expect(got == want)
                guard let got, let index = documents.firstIndex(of: got) else { break }
                var occurrences: [Occurrence] = []
                cursor.forEachOccurrence { occurrences.append($0) }
                #expect(occurrences == postings[index].occurrences)
                var counts = [UInt32](repeating: 0, count: 16)
                cursor.forEachField { field, count in counts[Int(field)] += count }
                #expect(counts.reduce(0, +) == UInt32(occurrences.count))
                // Sometimes re-ask the same target: the cursor stays.
                if rng.below(4) == 0 { #expect(try cursor.advance(to: target) == got) }
                target = got + UInt32(1 + rng.below(3000))
            }
            #expect(try cursor.next() == nil)
        }
    }

    /// A deferring cursor, advancing by random targets and reading the occurrences of some of
    /// the documents it stops at, finds the same documents and occurrences as the list holds.
    @Test func aDeferringCursorAdvancesAndReadsWhatTheListHolds() throws {
        var rng = TestRandom(seed: 10)
        let postings = randomPostings(&rng, count: 3000, gap: 30)
        let documents = postings.map(\.document)
        let bytes = PostingListEncoder.encode(postings, blockSize: 32)
        try bytes.withUnsafeBytes { raw in
            var cursor = try PostingCursor(raw, deferringGroups: true)
            var target: UInt32 = 0
            var read = 0
            while let got = try cursor.advance(to: target) {
                #expect(got == documents.first { $0 >= target })
                guard let index = documents.firstIndex(of: got) else { break }
                if rng.below(2) == 0 {
                    #expect(try cursor.readAllOccurrences() == postings[index].occurrences)
                    read += 1
                }
                target = got + UInt32(rng.below(3) == 0 ? 1 : 1 + rng.below(600))
            }
            #expect(read > 100)
        }
        // Walked with next(), reading every other document, it decodes the whole list.
        try bytes.withUnsafeBytes { raw in
            var cursor = try PostingCursor(raw, deferringGroups: true)
            var walked: [UInt32] = []
            while let d = try cursor.next() {
                if walked.count % 2 == 0 {
                    #expect(try cursor.readAllOccurrences() == postings[walked.count].occurrences)
                }
                walked.append(d)
            }
            #expect(walked == documents)
        }
    }

    /// Damaged groups a deferring cursor has not read yet still throw when it reads or passes
    /// them: a walk through the whole list fails exactly when an eager decode does.
    @Test func aDeferringCursorThrowsOnDamagedGroups() throws {
        var rng = TestRandom(seed: 14)
        let good = PostingListEncoder.encode(randomPostings(&rng, count: 400, gap: 100), blockSize: 32)
        var failures = 0
        for round in 0..<2000 {
            var bad = good
            for _ in 0...rng.below(3) { bad[rng.below(bad.count)] = UInt8(truncatingIfNeeded: rng.next()) }
            let eagerFails = (try? PostingCursor.decodeAll(bad)) == nil
            do {
                try bad.withUnsafeBytes { raw in
                    var cursor = try PostingCursor(raw, deferringGroups: true)
                    var previous: UInt32?
                    while let d = try cursor.next() {
                        if let previous { #expect(d > previous) }
                        previous = d
                        if round % 2 == 0 {
                            _ = try cursor.readAllOccurrences()
                        }
                    }
                }
                #expect(!eagerFails, "round \(round): the deferring walk missed damage")
            } catch {
                #expect(eagerFails, "round \(round): the deferring walk failed on bytes that decode")
                failures += 1
            }
        }
        #expect(failures > 1000)
    }

    @Test func corruptBytesThrowAndNeverTrap() throws {
        var rng = TestRandom(seed: 13)
        let postings = randomPostings(&rng, count: 400, gap: 100)
        let good = PostingListEncoder.encode(postings, blockSize: 32)
        #expect(throws: PostingFormatError.self) { try PostingCursor.decodeAll([]) }
        #expect(throws: PostingFormatError.self) { try PostingCursor.decodeAll(Array(good.dropLast())) }
        #expect(throws: PostingFormatError.self) { try PostingCursor.decodeAll(good + [0]) }
        var failures = 0
        for _ in 0..<2000 {
            var bad = good
            for _ in 0...rng.below(3) { bad[rng.below(bad.count)] = UInt8(truncatingIfNeeded: rng.next()) }
            if rng.below(4) == 0 { bad = Array(bad.prefix(rng.below(bad.count))) }
            do {
                let decoded = try PostingCursor.decodeAll(bad)
                // A change that still decodes must still give ascending documents.
                #expect(zip(decoded, decoded.dropFirst()).allSatisfy { $0.document < $1.document })
            } catch {
                failures += 1
            }
        }
        #expect(failures > 1000)
    }

    @Test func aResumedListIsTheListEncodedInOnePass() throws {
        var rng = TestRandom(seed: 21)
        for (count, blockSize) in [(1, 128), (2, 128), (128, 128), (129, 128), (700, 128), (300, 1), (77, 7), (64, 32)] {
            let postings = randomPostings(&rng, count: count, gap: 1 + rng.below(900))
            let whole = PostingListEncoder.encode(postings, blockSize: blockSize)
            for split in Set([1, count / 2, count - 1, rng.below(count)]) where split > 0 && split < count {
                var encoder = PostingListEncoder(blockSize: blockSize)
                let head = PostingListEncoder.encode(Array(postings[..<split]), blockSize: blockSize)
                try head.withUnsafeBytes { try encoder.resume(from: $0) }
                #expect(encoder.documentCount == split)
                for posting in postings[split...] { encoder.append(document: posting.document, occurrences: posting.occurrences) }
                var resumed: [UInt8] = []
                encoder.finish(into: &resumed)
                #expect(resumed == whole, "count \(count), block \(blockSize), split at \(split)")
            }
        }
    }

    @Test func resumingFromMalformedBytesThrowsAndLeavesTheEncoderEmpty() throws {
        var rng = TestRandom(seed: 22)
        let good = PostingListEncoder.encode(randomPostings(&rng, count: 300, gap: 50), blockSize: 32)
        var encoder = PostingListEncoder(blockSize: 32)
        for bad in [[], Array(good.dropLast()), good + [0], [5, 0], [1, 2, 0, 1]] as [[UInt8]] {
            #expect(throws: PostingFormatError.self) { try bad.withUnsafeBytes { try encoder.resume(from: $0) } }
            #expect(encoder.documentCount == 0)
        }
        // An empty list resumes as an empty encoder.
        try [UInt8]([0, 0]).withUnsafeBytes { try encoder.resume(from: $0) }
        #expect(encoder.documentCount == 0)
    }
}
