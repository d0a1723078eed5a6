/// A JSON tree with ordered members, written the way a given API era writes it.
indirect enum FixtureJSON {
    case null
    case bool(Bool)
    case int(Int)
    case string(String)
    case array([FixtureJSON])
    case object([(String, FixtureJSON)])
    /// JSON written as it is (values too deep to build as a tree).
    case verbatim(String)

    /// A string, or `null` for `nil`.
    static func text(_ value: String?) -> FixtureJSON { value.map { .string($0) } ?? .null }

    /// How strings are escaped.
    struct Style {
        /// Write `/` as `\/` (PHP-era encoders).
        var escapeSlashes = false
        /// Write every non-ASCII character as `\uXXXX` (surrogate pairs above U+FFFF).
        var escapeNonASCII = false
    }

    func write(to out: inout [UInt8], style: Style) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .int(let number): out.append(contentsOf: String(number).utf8)
        case .string(let text): Self.writeString(text, to: &out, style: style)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                element.write(to: &out, style: style)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(key, to: &out, style: style)
                out.append(UInt8(ascii: ":"))
                value.write(to: &out, style: style)
            }
            out.append(UInt8(ascii: "}"))
        case .verbatim(let json): out.append(contentsOf: json.utf8)
        }
    }

    func bytes(style: Style) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4096)
        write(to: &out, style: style)
        return out
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func writeEscapedUnit(_ unit: UInt16, to out: inout [UInt8]) {
        out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u")])
        for shift in stride(from: 12, through: 0, by: -4) {
            out.append(hexDigits[Int((unit >> UInt16(shift)) & 0xF)])
        }
    }

    static func writeString(_ text: String, to out: inout [UInt8], style: Style) {
        out.append(UInt8(ascii: "\""))
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case "\\": out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case "\n": out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case "\r": out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case "\t": out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case "/" where style.escapeSlashes: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "/")])
            default:
                if scalar.value < 0x20 {
                    writeEscapedUnit(UInt16(scalar.value), to: &out)
                } else if scalar.value >= 0x80 && style.escapeNonASCII {
                    UTF16.encode(scalar) { writeEscapedUnit($0, to: &out) }
                } else {
                    UTF8.encode(scalar) { out.append($0) }
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
