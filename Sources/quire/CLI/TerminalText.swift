/// Makes text from outside (server messages, headlines, ids, paths) inert on a terminal.
///
/// A server's error text or a stored headline may hold escape sequences (`ESC]0;…` retitles a
/// terminal, `ESC[2J` clears it) or a carriage return that overwrites the line with a forged
/// `quire: …` message. Diagnostics and table cells show such characters as `\u001b`-style
/// escapes instead: C0 controls, DEL, C1 controls, the bidirectional marks, overrides and
/// isolates (which reorder what a terminal shows) and the line and paragraph separators. A
/// backslash stays as it is. JSON output needs none of this: its writer escapes the same
/// characters as `\uXXXX`, and a JSON reader gets the exact text back.
enum TerminalText {
    /// `text` with every character that could steer a terminal written as `\uXXXX`.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard isUnsafe(scalar) else {
                out.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16)
            out.append(contentsOf: ("\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex).unicodeScalars)
        }
        return String(out)
    }

    /// JSON text from Foundation's serializer with the characters it leaves raw (DEL, C1,
    /// bidi controls, U+2028/U+2029) written as `\uXXXX`, as the store's JSON writer writes
    /// them: still the same JSON value. (It escapes C0 itself, so no raw one is left to rewrite.)
    static func inertJSON(_ json: String) -> String { escaped(json) }

    /// True for the scalars ``escaped(_:)`` rewrites.
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true  // bidi marks, overrides, isolates
        case 0x2028, 0x2029: true  // line and paragraph separators
        default: false
        }
    }
}
