import Testing

@testable import Quire

@Suite struct WalkedRecordKeysTests {
    private func key(_ i: Int) -> [UInt8] { Array("nyt://article/\(i)".utf8) }

    /// Every key added is found with its checksum, whatever the order it came in; keys never
    /// added are not; a key added without a checksum is present with none.
    @Test func everyAddedKeyIsFoundWithItsChecksumAndNoOtherIs() {
        var builder = WalkedRecordKeys.Builder(capacity: 0)
        for i in stride(from: 19_999, through: 0, by: -1) {
            let hash = key(i).withUnsafeBytes { WalkedRecordKeys.hash($0) }
            builder.add(hash: hash, textChecksum: i % 7 == 0 ? nil : UInt32(i * 3))
        }
        let walked = builder.sealed()
        for i in 0..<20_000 {
            key(i).withUnsafeBytes { k in
                #expect(walked.contains(k))
                #expect(walked.textChecksum(of: k) == (i % 7 == 0 ? nil : UInt32(i * 3)))
            }
        }
        for i in 20_000..<21_000 {
            #expect(!key(i).withUnsafeBytes { walked.contains($0) })
        }
    }

    /// Hashes far from uniform (most of them tiny, a few huge) still find every key: the
    /// interpolation gives way to halving.
    @Test func skewedHashesAreStillFound() {
        let hashes: [UInt64] = Array(1...5_000) + [UInt64.max - 3, UInt64.max / 2, 1 << 40]
        var builder = WalkedRecordKeys.Builder(capacity: hashes.count)
        for hash in hashes.shuffled() { builder.add(hash: hash, textChecksum: UInt32(truncatingIfNeeded: hash)) }
        let walked = builder.sealed()
        #expect(hashes.allSatisfy { walked.checksum(ofHash: $0) == UInt32(truncatingIfNeeded: $0) })
        #expect([0, 5_001, 1 << 39, UInt64.max].allSatisfy { walked.checksum(ofHash: $0) == nil && !walked.contains(hash: $0) })
    }

    /// Two keys sharing a hash are both present, and neither has a checksum to trust.
    @Test func aSharedHashIsPresentWithoutAChecksum() {
        var builder = WalkedRecordKeys.Builder(capacity: 3)
        builder.add(hash: 42, textChecksum: 1)
        builder.add(hash: 7, textChecksum: 2)
        builder.add(hash: 42, textChecksum: 3)
        let walked = builder.sealed()
        #expect(walked.contains(hash: 42) && walked.checksum(ofHash: 42) == nil)
        #expect(walked.checksum(ofHash: 7) == 2)
    }
}
