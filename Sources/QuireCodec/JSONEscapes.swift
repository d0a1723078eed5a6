/// What a JSON string escapes: `"`, `\` and the control characters below 0x20, nothing else
/// (non-ASCII stays UTF-8). Shared by the value tree's writer and the record writer.
enum JSONEscapes {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// Whether any of the eight bytes of `word` needs an escape: a byte below 0x20 (the
    /// subtraction borrows into its high bit) or one that is '"' or '\\' (zero after the XOR).
    @inline(__always) static func anyIn(_ word: UInt64) -> Bool {
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let below = (word &- ones &* 0x20) & ~word
        let isQuote = (quote &- ones) & ~quote
        let isBackslash = (backslash &- ones) & ~backslash
        return (below | isQuote | isBackslash) & highs != 0
    }

    @inline(__always) static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// The escape of a byte that needs one, first byte lowest, and its length (2 or 6).
    static func escape(of byte: UInt8) -> (bytes: UInt64, count: Int) {
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
            let bytes = prefix | UInt64(hexDigits[Int(byte >> 4)]) << 32 | UInt64(hexDigits[Int(byte & 0xF)]) << 40
            return (bytes, 6)
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
