/// Small JSON writing for the server's own envelopes (records come as dump's JSON bytes).
enum JSONText {
    /// `text` as a JSON string literal. `<`, `>` and `&` are escaped too, so the JSON stays
    /// inert if a browser ever reads it as HTML.
    static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "<", ">", "&", "\u{2028}", "\u{2029}":
                out += "\\u" + hex4(scalar.value)
            case _ where scalar.value < 0x20: out += "\\u" + hex4(scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    private static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// `{"error": message, "status": status}`.
    static func error(_ status: Int, _ message: String) -> [UInt8] {
        Array("{\"error\":\(string(message)),\"status\":\(status)}\n".utf8)
    }
}
