import Testing

@testable import QuireCodec

@Suite struct ChecksumTests {
    @Test func crc32cMatchesTheStandardCheckValue() {
        // The CRC-32C check value (RFC 3720, appendix B.4).
        let text = Array("123456789".utf8)
        #expect(text.withUnsafeBytes { Checksum.crc32c($0) } == 0xE306_9283)
        #expect(text.withUnsafeBytes { Checksum.tableCRC32C($0) } == 0xE306_9283)
        #expect([UInt8]().withUnsafeBytes { Checksum.crc32c($0) } == 0)
    }

    @Test func instructionAndTablesAgreeOnEveryLengthAndSplit() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let bytes = (0..<300).map { _ -> UInt8 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
        bytes.withUnsafeBytes { raw in
            for count in [0, 1, 7, 8, 9, 63, 64, 65, 300] {
                let slice = UnsafeRawBufferPointer(rebasing: raw[0..<count])
                let whole = Checksum.crc32c(slice)
                #expect(whole == Checksum.tableCRC32C(slice), "length \(count)")
                // Continuing over two halves gives the same value as one pass.
                let half = count / 2
                let first = Checksum.crc32c(UnsafeRawBufferPointer(rebasing: raw[0..<half]))
                #expect(Checksum.crc32c(UnsafeRawBufferPointer(rebasing: raw[half..<count]), continuing: first) == whole)
            }
        }
    }
}
