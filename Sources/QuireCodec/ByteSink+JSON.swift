/// The pieces of JSON text every writer of the codec shares (the value tree's and the record
/// writer's): strings escaped as JSON requires and decimal integers.
extension ByteSink {
    /// Appends `string` as a JSON string, escaping only `"`, `\` and control characters
    /// (non-ASCII stays UTF-8).
    mutating func appendJSONString(_ string: String) {
        var string = string
        string.withUTF8 { appendJSONString($0) }
    }

    /// Appends valid UTF-8 bytes as a JSON string, escaping only `"`, `\` and control characters.
    mutating func appendJSONString(_ bytes: UnsafeBufferPointer<UInt8>) {
        // Room for the bytes as they are and the quotes; an escape makes room for itself and the
        // rest (reserving for the longest form, six bytes a byte, would ask 6× a huge string).
        reserve(bytes.count + 2)
        appendReserved(UInt8(ascii: "\""))
        var run = 0  // the start of the bytes not copied yet: runs that need no escape go whole
        var i = 0
        while i < bytes.count {
            if i + 8 <= bytes.count, !Self.anyEscape(in: UnsafeRawPointer(bytes.baseAddress! + i).loadUnaligned(as: UInt64.self)) {
                i += 8
                continue
            }
            let byte = bytes[i]
            i += 1
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            appendReserved(UnsafeBufferPointer(rebasing: bytes[run..<i - 1]))
            run = i
            reserve(6 + (bytes.count - i) + 1)
            let (escape, count) = Self.escape(of: byte)
            for index in 0..<count { appendReserved(UInt8(truncatingIfNeeded: escape >> (8 * index))) }
        }
        appendReserved(UnsafeBufferPointer(rebasing: bytes[run...]))
        appendReserved(UInt8(ascii: "\""))
    }

    /// Appends an integer in decimal, as `String(value)` writes it.
    mutating func appendDecimal(_ value: Int64) {
        appendDecimal(magnitude: value.magnitude, negative: value < 0)
    }

    /// Appends `magnitude` in decimal, a minus sign first when `negative`.
    mutating func appendDecimal(magnitude: UInt64, negative: Bool) {
        reserve(21)
        if negative { appendReserved(UInt8(ascii: "-")) }
        let first = count
        var rest = magnitude
        repeat {
            appendReserved(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        // Written lowest digit first: turned around in place.
        var low = base + first
        var high = base + count - 1
        while low < high {
            swap(&low.pointee, &high.pointee)
            low += 1
            high -= 1
        }
    }

    mutating func appendLiteral(_ literal: StaticString) {
        append(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101

    /// Whether any of the eight bytes of `word` needs an escape: a byte below 0x20 (the
    /// subtraction borrows into its high bit) or one that is '"' or '\\' (zero after the XOR).
    @inline(__always) private static func anyEscape(in word: UInt64) -> Bool {
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let below = (word &- ones &* 0x20) & ~word
        let isQuote = (quote &- ones) & ~quote
        let isBackslash = (backslash &- ones) & ~backslash
        return (below | isQuote | isBackslash) & (ones &* 0x80) != 0
    }

    /// The escape of a byte that needs one, first byte lowest, and its length (2 or 6).
    private static func escape(of byte: UInt8) -> (bytes: UInt64, count: Int) {
        func pair(_ second: Unicode.Scalar) -> (UInt64, Int) {
            (UInt64(UInt8(ascii: "\\")) | UInt64(UInt8(ascii: second)) << 8, 2)
        }
        switch byte {
        case UInt8(ascii: "\""): return pair("\"")
        case UInt8(ascii: "\\"): return pair("\\")
        case 0x0A: return pair("n")
        case 0x0D: return pair("r")
        case 0x09: return pair("t")
        case 0x08: return pair("b")
        case 0x0C: return pair("f")
        default:
            let prefix = UInt64(UInt8(ascii: "\\")) | UInt64(UInt8(ascii: "u")) << 8
                | UInt64(UInt8(ascii: "0")) << 16 | UInt64(UInt8(ascii: "0")) << 24
            return (prefix | UInt64(hexDigits[Int(byte >> 4)]) << 32 | UInt64(hexDigits[Int(byte & 0xF)]) << 40, 6)
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
