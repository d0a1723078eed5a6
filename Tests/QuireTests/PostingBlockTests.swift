import QuireText
import Testing

@testable import Quire

/// Posting blocks read back from damaged pages: every malformed list is a typed error.
@Suite struct PostingBlockTests {
    private func decode(_ bytes: [UInt8]) throws -> [UInt32] {
        try bytes.withUnsafeBytes { try PostingBlock($0).documents }
    }

    private func isCorrupted(_ error: any Error) -> Bool { (error as? StoreError)?.code == .corrupted }

    @Test func valuesThatOverflowOrRunPastTheirBlockAreCorrupted() throws {
        let max: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]  // UInt64.max
        // A skip entry of 1 byte whose document takes 2: the group header lies past the block.
        #expect { try decode([1, 1, 42, 1, 0xAA, 0x01, 33, 0]) } throws: { isCorrupted($0) }
        // A second block whose skip entry says UInt64.max documents on.
        #expect { try decode([2, 2, 5, 3] + max + [3, 5, 33, 0, 1, 33, 0]) } throws: { isCorrupted($0) }
        // A document delta of UInt64.max after a first document.
        #expect { try decode([2, 1, 7, 15, 5, 33, 0] + max + [33, 0]) } throws: { isCorrupted($0) }
        // The same shapes with sound numbers decode.
        #expect(try decode([2, 2, 5, 3, 1, 3, 5, 33, 0, 1, 33, 0]) == [5, 6])
    }

    @Test func everyDamagedByteAndCutOfAListDecodesOrThrows() throws {
        let documents: [UInt32] = (0..<40).map { $0 * $0 * 37 + 3 }
        let postings = documents.map { d in
            Posting(document: d, occurrences: (0..<(d % 4 + 1)).map { Occurrence(field: UInt8(d % 3), position: $0 * 5) })
        }
        let sound = PostingListEncoder.encode(postings, blockSize: 8)
        #expect(try decode(sound) == documents)
        var corrupted = 0
        var variants: [[UInt8]] = (0..<sound.count).map { Array(sound.prefix($0)) }
        for i in sound.indices {
            for byte: UInt8 in [0x00, 0x01, 0x7F, 0x80, 0xFF, sound[i] ^ 0x40] where byte != sound[i] {
                var damaged = sound
                damaged[i] = byte
                variants.append(damaged)
            }
        }
        for damaged in variants {
            do {
                let decoded = try decode(damaged)
                // What decodes is still a strictly ascending list.
                #expect(zip(decoded, decoded.dropFirst()).allSatisfy { $0 < $1 })
            } catch {
                #expect(isCorrupted(error))
                corrupted += 1
            }
        }
        // Every cut list is incomplete, so most variants are refused.
        #expect(corrupted >= sound.count)
    }
}

/// The other readers of stored search bytes, given numbers past what they can hold.
@Suite struct SearchBytesHostileTests {
    private let max: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]  // UInt64.max

    @Test func hugeCountsAndLengthsAreCorrupted() {
        func corrupted(_ body: (UnsafeRawBufferPointer) throws -> Void, _ bytes: [UInt8]) -> Bool {
            do {
                try bytes.withUnsafeBytes { try body($0) }
                return false
            } catch { return (error as? StoreError)?.code == .corrupted }
        }
        #expect(corrupted({ _ = try SearchPostings.documentCount($0) }, max + [1]))
        #expect(corrupted({ _ = try SearchDatabases.documentEntry($0) }, [0, 0, 0, 7] + max + [0x61]))
        #expect(corrupted({ _ = try SearchState($0) }, [1] + max + Array(repeating: 0, count: 16)))
        #expect(throws: PostingFormatError.self) {
            var encoder = PostingListEncoder()
            // 2 documents in 2 blocks; the second block's skip entry is UInt64.max documents on.
            try ([2, 2, 5, 3] + max + [3, 5, 33, 0, 1, 33, 0] as [UInt8]).withUnsafeBytes { try encoder.resume(from: $0) }
        }
    }
}
