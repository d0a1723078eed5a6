/// Text from outside (API messages, article fields) made safe to print on a terminal: control
/// characters (ESC, CR, LF, DEL, C1) are shown as `\u001b`-style escapes, so nothing printed can
/// retitle or clear the terminal or forge a line.
enum TerminalText {
    static func inert(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
