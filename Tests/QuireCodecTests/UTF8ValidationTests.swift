import Testing

@testable import QuireCodec

/// The codec's own UTF-8 validator must agree with the standard library's on every input, in the
/// short (automaton) path and at every position of the sixteen-byte blocks of the long path.
@Suite struct UTF8ValidationTests {
    /// The standard library's verdict and the validator's, plus the validator's ASCII flag.
    func verdicts(_ bytes: [UInt8]) -> (expected: Bool, actual: UTF8Validation.Outcome) {
        let expected = String(validating: bytes, as: UTF8.self) != nil
        let actual = bytes.withUnsafeBufferPointer { buffer in
            UTF8Validation.validate(buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!, count: buffer.count)
        }
        return (expected, actual)
    }

    func expectAgreement(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let (expected, actual) = verdicts(bytes)
        #expect(actual.isValid == expected, "\(bytes.map { String($0, radix: 16) })", sourceLocation: sourceLocation)
        if actual.isValid {
            #expect(actual.isASCII == bytes.allSatisfy { $0 < 0x80 }, sourceLocation: sourceLocation)
        }
    }

    /// Sequences at the edges of every rule: overlong forms, surrogates, past U+10FFFF, stray and
    /// missing continuation bytes, bytes that never occur.
    static let edgeSequences: [[UInt8]] = [
        [0x7F], [0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF], [0xC2, 0x80], [0xDF, 0xBF], [0xC2], [0xC2, 0x41],
        [0xE0, 0x9F, 0x80], [0xE0, 0xA0, 0x80], [0xE1, 0x80, 0x80], [0xEC, 0xBF, 0xBF], [0xED, 0x9F, 0xBF],
        [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xEE, 0x80, 0x80], [0xEF, 0xBF, 0xBF], [0xE1, 0x80],
        [0xE1, 0x80, 0x41], [0xE1, 0x41, 0x80], [0xF0, 0x8F, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80],
        [0xF3, 0xBF, 0xBF, 0xBF], [0xF4, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80],
        [0xF8, 0x88, 0x80, 0x80, 0x80], [0xFF], [0xFE], [0xF0, 0x90, 0x80], [0xF0, 0x90, 0x80, 0x41],
        [0xC3, 0xA9, 0x80], [0xE2, 0x80, 0x94, 0x80], [0xF0, 0x9F, 0x8E, 0x89, 0x80], [0xC3, 0xC3, 0xA9],
    ]

    @Test func everyOneAndTwoByteInput() {
        for first in 0...255 {
            expectAgreement([UInt8(first)])
            for second in 0...255 { expectAgreement([UInt8(first), UInt8(second)]) }
        }
    }

    @Test func everyLeadWithEverySecondByte() {
        let tails: [[UInt8]] = [[], [0x80], [0xBF], [0x41], [0xC0], [0x80, 0x80], [0xBF, 0xBF], [0x80, 0x41]]
        for lead in 0xC0...0xFF {
            for second in 0...255 {
                for tail in tails { expectAgreement([UInt8(lead), UInt8(second)] + tail) }
            }
        }
    }

    /// Each edge sequence at every offset of ASCII text long enough for the block path, including
    /// the last block (which overlaps the one before it) and the last three bytes.
    @Test func edgeSequencesAtEveryBlockPosition() {
        for sequence in Self.edgeSequences {
            for length in [19, 20, 31, 35, 47, 64] where length >= sequence.count {
                for offset in 0...(length - sequence.count) {
                    var bytes = [UInt8](repeating: 0x61, count: length)
                    bytes.replaceSubrange(offset..<(offset + sequence.count), with: sequence)
                    expectAgreement(bytes)
                }
            }
        }
    }

    /// Random mixtures of valid characters of every width and random bytes, of every length up to
    /// a few blocks.
    @Test func randomMixturesAgreeWithTheStandardLibrary() {
        let characters: [[UInt8]] = ["a", "Z", " ", "é", "ß", "—", "東", "한", "🎉", "\u{10FFFF}", "\u{FFFD}"].map { Array($0.utf8) }
        var seed: UInt64 = 0x5EED
        func next() -> UInt64 {
            seed &+= 0x9E37_79B9_7F4A_7C15
            var z = seed
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        var valid = 0
        for _ in 0..<20_000 {
            var bytes: [UInt8] = []
            let target = Int(next() % 72)
            while bytes.count < target { bytes += characters[Int(next() % UInt64(characters.count))] }
            if next() % 2 == 0, !bytes.isEmpty {
                // Corrupt one byte, drop one, or cut the end.
                let position = Int(next() % UInt64(bytes.count))
                switch next() % 3 {
                case 0: bytes[position] = UInt8(truncatingIfNeeded: next())
                case 1: bytes.remove(at: position)
                default: bytes.removeLast(min(bytes.count, Int(next() % 3) + 1))
                }
            }
            let (expected, actual) = verdicts(bytes)
            #expect(actual.isValid == expected, "\(bytes.map { String($0, radix: 16) })")
            if expected { valid += 1 }
        }
        // Both verdicts occur often enough for the comparison to mean something.
        #expect(valid > 8_000 && valid < 18_000)
    }

    @Test func stringsKeepTheirBytesAndASCIIFlag() throws {
        for text in ["", "plain ascii that is long enough for blocks", "Zürich — 東京 🎉 and more text after"] {
            let bytes = Array(text.utf8)
            let string = bytes.withUnsafeBufferPointer { buffer in
                UTF8Validation.string(buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!, count: buffer.count)
            }
            #expect(string == text)
            #expect(string.map { Array($0.utf8) } == bytes)
        }
        let invalid: [UInt8] = Array("long enough ascii prefix".utf8) + [0xED, 0xA0, 0x80]
        #expect(invalid.withUnsafeBufferPointer { UTF8Validation.string($0.baseAddress!, count: $0.count) } == nil)
    }
}
