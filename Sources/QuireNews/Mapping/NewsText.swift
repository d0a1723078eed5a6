/// Text clean-ups the mappings apply where an API sends markup as text.
///
/// Everything else is preserved exactly: no truncation, no Unicode normalisation, control
/// characters kept (output layers escape them for terminals).
public enum NewsText {
    /// `text` without leading and trailing white space (spaces, tabs, line breaks, no-break spaces).
    public static func trimmed(_ text: String) -> String {
        var scalars = Substring(text).unicodeScalars
        while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }

    /// Whether `text` is empty or white space only.
    public static func isBlank(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy(\.properties.isWhitespace)
    }

    /// The inline tags search highlighting wraps around matched terms (`hl=true` wraps them in
    /// `<strong>`); only these are removed, so a literal `a < b` in a headline stays.
    static let highlightTags: Set<String> = ["strong", "em", "b", "i", "mark", "span", "u", "highlight"]

    /// `text` without highlighting tags (`<strong>`, `</strong>`, `<em class="x">`…).
    public static func removingHighlightTags(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "<")) else { return text }
        return removingTags(text) { highlightTags.contains($0) }
    }

    /// `text` with every tag removed (`<p>`, `<a href=…>`, `<br/>`), for fields that are HTML.
    /// A line break or a block's edge (`<br>`, `<p>`, `</div>`…) leaves a space, so the words
    /// on either side stay apart; a script's or a style's content goes with its tags (a stray
    /// closing `</script>` is only a tag). A `<` that does not open a well-formed tag is kept.
    /// Removal is repeated while it removes something (up to ``tagRemovalPasses`` times):
    /// removing `<b>` from `<scr<b>ipt>` joins the text around it into a new tag.
    public static func removingAllTags(_ text: String) -> String {
        var current = text
        for _ in 0..<tagRemovalPasses {
            guard current.utf8.contains(UInt8(ascii: "<")) else { return current }
            let stripped = removingTags(current, separating: true) { _ in true }
            if stripped.utf8.count == current.utf8.count { return current }
            current = stripped
        }
        return current
    }

    /// How many times ``removingAllTags(_:)`` removes tags at most: nesting deeper than this is
    /// crafted, and what is left is text (every output shows it as text).
    static let tagRemovalPasses = 8

    /// Tags that separate what is on either side of them, as a line break does.
    static let separatingTags: Set<String> = [
        "br", "p", "div", "li", "ul", "ol", "tr", "td", "th", "table", "h1", "h2", "h3", "h4", "h5", "h6",
        "blockquote", "hr", "section", "article", "header", "footer", "dd", "dt", "pre", "figure", "figcaption",
    ]

    private static func removingTags(_ text: String, separating: Bool = false, where matches: (String) -> Bool) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        var apart = false  // a separating tag was removed: a space before the next text
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "<"), let (name, end) = tag(in: bytes, at: i), matches(name) {
                let closing = bytes[i + 1] == UInt8(ascii: "/")
                i = end
                guard separating else { continue }
                // Only an opening tag has content to drop: a stray `</script>` skipped to a
                // closing tag that never came, and the rest of the text went with it.
                if name == "script" || name == "style", !closing, bytes[i - 2] != UInt8(ascii: "/") {
                    i = Self.closingTagEnd(of: name, in: bytes, from: i)
                } else if separatingTags.contains(name) {
                    apart = true
                }
                continue
            }
            if apart, let last = out.last, ![32, 9, 10, 13].contains(last), ![32, 9, 10, 13].contains(bytes[i]) {
                out.append(32)
            }
            apart = false
            out.append(bytes[i])
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The index after the closing tag `</name>` that follows `start`, or the end of `bytes`.
    private static func closingTagEnd(of name: String, in bytes: [UInt8], from start: Int) -> Int {
        var i = start
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "<"), i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "/"),
                let (closing, after) = tag(in: bytes, at: i), closing == name
            {
                return after
            }
            i += 1
        }
        return bytes.count
    }

    /// A tag starting at `start` (`<name …>` or `</name>`): its lowercased name and the index after `>`.
    private static func tag(in bytes: [UInt8], at start: Int) -> (String, Int)? {
        var i = start + 1
        if i < bytes.count, bytes[i] == UInt8(ascii: "/") { i += 1 }
        let nameStart = i
        while i < bytes.count, isLetterOrDigit(bytes[i]) { i += 1 }
        guard i > nameStart, isLetter(bytes[nameStart]), i < bytes.count else { return nil }
        let name = String(decoding: bytes[nameStart..<i], as: UTF8.self).lowercased()
        guard bytes[i] == UInt8(ascii: ">") || bytes[i] == UInt8(ascii: " ") || bytes[i] == UInt8(ascii: "/")
            || bytes[i] == UInt8(ascii: "\t") || bytes[i] == UInt8(ascii: "\n")
        else { return nil }
        // Attributes: up to the closing `>`, skipping quoted values; give up at a new `<`.
        var quote: UInt8?
        while i < bytes.count {
            let b = bytes[i]
            if let q = quote {
                if b == q { quote = nil }
            } else if b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") {
                quote = b
            } else if b == UInt8(ascii: ">") {
                return (name, i + 1)
            } else if b == UInt8(ascii: "<") {
                return nil
            }
            i += 1
        }
        return nil
    }

    private static func isLetter(_ b: UInt8) -> Bool { (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z") }
    private static func isLetterOrDigit(_ b: UInt8) -> Bool { isLetter(b) || (b >= 0x30 && b <= 0x39) }

    /// `text` with HTML character references decoded: `&amp;`, `&eacute;`, `&#8217;`, `&#x2014;`.
    /// An unknown or malformed reference is kept as written.
    public static func decodingEntities(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "&")) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest.index(after: amp)
            if let semicolon = rest[after...].prefix(12).firstIndex(of: ";"),
                let decoded = decode(reference: rest[after..<semicolon])
            {
                out.unicodeScalars.append(decoded)
                rest = rest[rest.index(after: semicolon)...]
            } else {
                out.append("&")
                rest = rest[after...]
            }
        }
        out += rest
        return out
    }

    private static func decode(reference: Substring) -> Unicode.Scalar? {
        if reference.hasPrefix("#") {
            let digits = reference.dropFirst()
            let hex = digits.first == "x" || digits.first == "X"
            let number = hex ? digits.dropFirst() : digits
            // Digits only: `UInt32` would also take a sign (`&#+75;`), which HTML does not.
            guard number.unicodeScalars.allSatisfy({ hex ? $0.properties.isASCIIHexDigit : ("0"..."9").contains($0) }) else {
                return nil
            }
            let value: UInt32? = hex ? UInt32(number, radix: 16) : UInt32(number)
            guard let value, value != 0 else { return nil }
            // HTML reads &#128;–&#159; as windows-1252 (what the pages meant), not C1 controls.
            if let mapped = windows1252C1[value] { return Unicode.Scalar(mapped) }
            return Unicode.Scalar(value)
        }
        return namedEntities[String(reference)].flatMap { Unicode.Scalar($0) }
    }

    /// What HTML's numeric references 0x80–0x9F stand for (the windows-1252 characters at those
    /// bytes; 0x81, 0x8D, 0x8F, 0x90 and 0x9D have none and stay as they are).
    static let windows1252C1: [UInt32: UInt32] = [
        0x80: 0x20AC, 0x82: 0x201A, 0x83: 0x0192, 0x84: 0x201E, 0x85: 0x2026, 0x86: 0x2020, 0x87: 0x2021,
        0x88: 0x02C6, 0x89: 0x2030, 0x8A: 0x0160, 0x8B: 0x2039, 0x8C: 0x0152, 0x8E: 0x017D, 0x91: 0x2018,
        0x92: 0x2019, 0x93: 0x201C, 0x94: 0x201D, 0x95: 0x2022, 0x96: 0x2013, 0x97: 0x2014, 0x98: 0x02DC,
        0x99: 0x2122, 0x9A: 0x0161, 0x9B: 0x203A, 0x9C: 0x0153, 0x9E: 0x017E, 0x9F: 0x0178,
    ]

    /// The named references seen in news feeds (HTML 4's Latin-1, typography and symbols).
    static let namedEntities: [String: UInt32] = {
        var table: [String: UInt32] = [
            "amp": 0x26, "lt": 0x3C, "gt": 0x3E, "quot": 0x22, "apos": 0x27, "nbsp": 0xA0,
            "lsquo": 0x2018, "rsquo": 0x2019, "sbquo": 0x201A, "ldquo": 0x201C, "rdquo": 0x201D, "bdquo": 0x201E,
            "ndash": 0x2013, "mdash": 0x2014, "hellip": 0x2026, "bull": 0x2022, "middot": 0xB7, "prime": 0x2032,
            "laquo": 0xAB, "raquo": 0xBB, "lsaquo": 0x2039, "rsaquo": 0x203A, "dagger": 0x2020, "trade": 0x2122,
            "copy": 0xA9, "reg": 0xAE, "deg": 0xB0, "euro": 0x20AC, "pound": 0xA3, "yen": 0xA5, "cent": 0xA2,
            "sect": 0xA7, "para": 0xB6, "times": 0xD7, "divide": 0xF7, "plusmn": 0xB1, "frac12": 0xBD,
            "frac14": 0xBC, "frac34": 0xBE, "iexcl": 0xA1, "iquest": 0xBF, "shy": 0xAD, "thinsp": 0x2009,
            "ensp": 0x2002, "emsp": 0x2003, "zwnj": 0x200C, "zwj": 0x200D, "szlig": 0xDF, "OElig": 0x152,
            "oelig": 0x153, "Scaron": 0x160, "scaron": 0x161, "Yuml": 0x178, "fnof": 0x192,
        ]
        // Latin-1 letters with diacritics: the vowel (or consonant) plus the mark's name.
        let marks: [(String, [(String, UInt32)])] = [
            ("grave", [("A", 0xC0), ("E", 0xC8), ("I", 0xCC), ("O", 0xD2), ("U", 0xD9), ("a", 0xE0), ("e", 0xE8), ("i", 0xEC), ("o", 0xF2), ("u", 0xF9)]),
            ("acute", [("A", 0xC1), ("E", 0xC9), ("I", 0xCD), ("O", 0xD3), ("U", 0xDA), ("Y", 0xDD), ("a", 0xE1), ("e", 0xE9), ("i", 0xED), ("o", 0xF3), ("u", 0xFA), ("y", 0xFD)]),
            ("circ", [("A", 0xC2), ("E", 0xCA), ("I", 0xCE), ("O", 0xD4), ("U", 0xDB), ("a", 0xE2), ("e", 0xEA), ("i", 0xEE), ("o", 0xF4), ("u", 0xFB)]),
            ("tilde", [("A", 0xC3), ("N", 0xD1), ("O", 0xD5), ("a", 0xE3), ("n", 0xF1), ("o", 0xF5)]),
            ("uml", [("A", 0xC4), ("E", 0xCB), ("I", 0xCF), ("O", 0xD6), ("U", 0xDC), ("a", 0xE4), ("e", 0xEB), ("i", 0xEF), ("o", 0xF6), ("u", 0xFC), ("y", 0xFF)]),
            ("ring", [("A", 0xC5), ("a", 0xE5)]),
            ("cedil", [("C", 0xC7), ("c", 0xE7)]),
            ("slash", [("O", 0xD8), ("o", 0xF8)]),
        ]
        for (mark, letters) in marks {
            for (letter, scalar) in letters { table[letter + mark] = scalar }
        }
        table["AElig"] = 0xC6
        table["aelig"] = 0xE6
        table["ETH"] = 0xD0
        table["eth"] = 0xF0
        table["THORN"] = 0xDE
        table["thorn"] = 0xFE
        return table
    }()

    /// Text from a field that holds entity-encoded HTML (Feedzilla titles and summaries): the
    /// references decoded, then, if that revealed markup, the tags removed and the references
    /// inside it decoded too.
    public static func plainTextFromEncodedHTML(_ text: String) -> String {
        let decoded = decodingEntities(text)
        guard decoded.utf8.contains(UInt8(ascii: "<")) else { return decoded }
        let stripped = removingAllTags(decoded)
        return stripped == decoded ? decoded : decodingEntities(stripped)
    }
}
