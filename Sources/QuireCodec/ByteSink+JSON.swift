/// The pieces of JSON text every writer of the codec shares (the value tree's and the record
/// writer's): strings escaped as JSON requires and decimal integers.
///
/// Beyond what JSON requires (`"`, `\\`, C0 controls), the characters that steer a terminal or
/// break JavaScript are written as `\\uXXXX` too: DEL, the C1 controls (U+009B is a CSI to
/// terminals that read C1 in UTF-8), the bidirectional marks, overrides and isolates (which
/// reorder what a terminal shows), and U+2028/U+2029. `quire dump | less` shows them inert, and
/// a JSON reader gets the same text back. Everything else non-ASCII stays UTF-8.
extension ByteSink {
    /// Appends `string` as a JSON string (see the extension's note for what is escaped).
    mutating func appendJSONString(_ string: String) {
        var string = string
        string.withUTF8 { appendJSONString($0) }
    }

    /// Appends valid UTF-8 bytes as a JSON string (see the extension's note for what is escaped).
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
            if byte >= 0x80 {
                guard let (scalar, length) = Self.unsafeScalar(in: bytes, at: i - 1) else { continue }
                appendReserved(UnsafeBufferPointer(rebasing: bytes[run..<i - 1]))
                i += length - 1
                run = i
                reserve(6 + (bytes.count - i) + 1)
                appendUnicodeEscape(scalar)
                continue
            }
            guard byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
                continue
            }
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

    /// Whether any of the eight bytes of `word` may need an escape: a byte below 0x20 (the
    /// subtraction borrows into its high bit), one that is '"' or '\\' (zero after the XOR), or
    /// one at or above 0x7F (DEL, or part of a non-ASCII character, looked at byte by byte).
    @inline(__always) private static func anyEscape(in word: UInt64) -> Bool {
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let below = (word &- ones &* 0x20) & ~word
        let isQuote = (quote &- ones) & ~quote
        let isBackslash = (backslash &- ones) & ~backslash
        // Each byte's low seven bits plus one reach the high bit only for 0x7F; no carry
        // crosses into the next byte.
        let high = ((word & (ones &* 0x7F)) &+ ones) | word
        return (below | isQuote | isBackslash | high) & (ones &* 0x80) != 0
    }

    /// The scalar starting at `index` when it is one written escaped (a C1 control, a bidi
    /// mark, override or isolate, U+2028/U+2029), with its length in bytes; nil otherwise.
    @inline(__always) private static func unsafeScalar(in bytes: UnsafeBufferPointer<UInt8>, at index: Int)
        -> (UInt32, Int)?
    {
        let lead = bytes[index]
        let rest = bytes.count - index
        switch lead {
        case 0xC2 where rest >= 2 && (0x80...0x9F).contains(bytes[index + 1]):
            return (UInt32(bytes[index + 1]), 2)  // U+0080…U+009F
        case 0xD8 where rest >= 2 && bytes[index + 1] == 0x9C:
            return (0x061C, 2)  // ARABIC LETTER MARK
        case 0xE2 where rest >= 3:
            let scalar = 0x2000 | UInt32(bytes[index + 1] & 0x3F) << 6 | UInt32(bytes[index + 2] & 0x3F)
            switch (bytes[index + 1], scalar) {
            case (0x80, 0x200E...0x200F), (0x80, 0x2028...0x202E), (0x81, 0x2066...0x2069): return (scalar, 3)
            default: return nil
            }
        default:
            return nil
        }
    }

    /// Appends `\\uXXXX` for a scalar of the Basic Multilingual Plane.
    private mutating func appendUnicodeEscape(_ scalar: UInt32) {
        appendReserved(UInt8(ascii: "\\"))
        appendReserved(UInt8(ascii: "u"))
        for shift in [12, 8, 4, 0] { appendReserved(Self.hexDigits[Int(scalar >> UInt32(shift) & 0xF)]) }
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
