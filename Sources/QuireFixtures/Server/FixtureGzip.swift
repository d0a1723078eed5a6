/// A tiny gzip writer for fixtures: enough to serve compressed responses and compression bombs
/// without linking zlib.
///
/// It uses one fixed-Huffman deflate block (RFC 1951 §3.2.6) with literals and run-length
/// matches at distance 1. Ordinary text barely shrinks, but long runs (a bomb of zeros) shrink
/// about 160 times, which is what the fixtures need.
public enum FixtureGzip {
    /// A complete gzip member (RFC 1952) whose decoded content is `bytes`.
    public static func compress(_ bytes: [UInt8]) -> [UInt8] {
        var writer = DeflateWriter()
        writer.beginFixedBlock()
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            writer.literal(byte)
            index += 1
            var run = 0
            while index + run < bytes.count, bytes[index + run] == byte { run += 1 }
            writer.repeatPrevious(run)
            index += run
        }
        writer.endBlock()
        return member(deflated: writer.bytes, crc: CRC32.checksum(bytes), count: bytes.count)
    }

    /// A gzip member whose decoded content is `count` zero bytes; about `count / 160` bytes long.
    public static func zeros(count: Int) -> [UInt8] {
        var writer = DeflateWriter()
        writer.beginFixedBlock()
        if count > 0 {
            writer.literal(0)
            writer.repeatPrevious(count - 1)
        }
        writer.endBlock()
        return member(deflated: writer.bytes, crc: CRC32.checksumOfZeros(count: count), count: count)
    }

    private static func member(deflated: [UInt8], crc: UInt32, count: Int) -> [UInt8] {
        // ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL=0 OS=255 (unknown)
        var out: [UInt8] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]
        out.append(contentsOf: deflated)
        appendLittleEndian(crc, to: &out)
        appendLittleEndian(UInt32(truncatingIfNeeded: count), to: &out)  // ISIZE is the size mod 2^32
        return out
    }

    private static func appendLittleEndian(_ value: UInt32, to out: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
}

/// Writes a single fixed-Huffman deflate block.
struct DeflateWriter {
    private(set) var bytes: [UInt8] = []
    private var bitBuffer: UInt64 = 0
    private var bitCount = 0

    private static let lengthBases: [Int] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195,
        227, 258,
    ]
    private static let lengthExtraBits: [Int] = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ]

    mutating func beginFixedBlock() {
        writeBits(1, count: 1)  // BFINAL
        writeBits(1, count: 2)  // BTYPE = 01, fixed Huffman codes
    }

    mutating func literal(_ byte: UInt8) { writeSymbol(Int(byte)) }

    /// Repeats the previous byte `count` more times, as matches at distance 1 where possible.
    mutating func repeatPrevious(_ count: Int) {
        var remaining = count
        while remaining >= 3 {
            // Never leave a remainder of 1 or 2 that a match cannot cover when it can be avoided.
            var length = min(remaining, 258)
            if (1...2).contains(remaining - length) { length -= 3 }
            writeMatch(length: length)
            remaining -= length
        }
        for _ in 0..<remaining { writeSymbol(previousLiteral) }
    }

    private var previousLiteral = 0

    mutating func endBlock() {
        writeSymbol(256)
        if bitCount > 0 {
            bytes.append(UInt8(truncatingIfNeeded: bitBuffer))
            bitBuffer = 0
            bitCount = 0
        }
    }

    private mutating func writeMatch(length: Int) {
        var index = Self.lengthBases.count - 1
        while Self.lengthBases[index] > length { index -= 1 }
        writeSymbol(257 + index)
        writeBits(UInt32(length - Self.lengthBases[index]), count: Self.lengthExtraBits[index])
        writeHuffman(0, length: 5)  // distance code 0 = distance 1, no extra bits
    }

    /// Emits a literal/length symbol with the fixed code table of RFC 1951 §3.2.6.
    private mutating func writeSymbol(_ symbol: Int) {
        if symbol < 256 { previousLiteral = symbol }
        switch symbol {
        case 0...143: writeHuffman(UInt32(0x30 + symbol), length: 8)
        case 144...255: writeHuffman(UInt32(0x190 + symbol - 144), length: 9)
        case 256...279: writeHuffman(UInt32(symbol - 256), length: 7)
        default: writeHuffman(UInt32(0xC0 + symbol - 280), length: 8)
        }
    }

    /// Huffman codes are packed starting with their most significant bit.
    private mutating func writeHuffman(_ code: UInt32, length: Int) {
        var reversed: UInt32 = 0
        for bit in 0..<length where code & (1 << UInt32(length - 1 - bit)) != 0 { reversed |= 1 << UInt32(bit) }
        writeBits(reversed, count: length)
    }

    /// Other fields are packed starting with their least significant bit.
    private mutating func writeBits(_ value: UInt32, count: Int) {
        guard count > 0 else { return }
        bitBuffer |= UInt64(value & ((1 << UInt32(count)) - 1)) << UInt64(bitCount)
        bitCount += count
        while bitCount >= 8 {
            bytes.append(UInt8(truncatingIfNeeded: bitBuffer))
            bitBuffer >>= 8
            bitCount -= 8
        }
    }
}

/// CRC-32 as used by gzip (reflected polynomial 0xEDB88320).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        return crc
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return ~crc
    }

    /// The CRC of `count` zero bytes without touching `count` bytes: feeding a zero byte is a
    /// linear map of the 32-bit register, so it is raised to the `count`-th power by squaring.
    static func checksumOfZeros(count: Int) -> UInt32 {
        // Column i is the register after feeding one zero byte to the register 1 << i.
        var power: [UInt32] = (0..<32).map { bit in
            let register = UInt32(1) << UInt32(bit)
            return table[Int(register & 0xFF)] ^ (register >> 8)
        }
        var register: UInt32 = 0xFFFF_FFFF
        var remaining = count
        while remaining > 0 {
            if remaining & 1 != 0 { register = apply(power, to: register) }
            power = power.map { apply(power, to: $0) }
            remaining >>= 1
        }
        return ~register
    }

    private static func apply(_ matrix: [UInt32], to vector: UInt32) -> UInt32 {
        var result: UInt32 = 0
        for bit in 0..<32 where vector & (1 << UInt32(bit)) != 0 { result ^= matrix[bit] }
        return result
    }
}
