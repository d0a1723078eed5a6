/// How many terminal columns text takes, for tables that line up: East Asian wide and
/// fullwidth characters and emoji take two, combining marks and format characters none (they
/// join the character before), everything else one. A character (a grapheme cluster) counts as
/// its first scalar, or two when one of its scalars shows as an emoji.
enum TerminalColumns {
    /// The columns `text` takes.
    static func width(of text: String) -> Int {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.utf8.count }  // a column a byte
        return text.reduce(0) { $0 + width(of: $1) }
    }

    /// The columns one character takes: 0, 1 or 2.
    static func width(of character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.value < 0x80 { return 1 }
        if scalars.contains(where: { $0.properties.isEmojiPresentation }) || scalars.contains("\u{FE0F}") { return 2 }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: return isWide(first.value) ? 2 : 1
        }
    }

    /// `text` in exactly `columns` columns: cut with `…` when longer, padded with spaces when shorter.
    static func fitted(_ text: String, _ columns: Int) -> String {
        var used = width(of: text)
        var out = text
        if used > columns {
            out = ""
            used = 0
            for character in text {
                let w = width(of: character)
                if used + w > columns - 1 { break }
                out.append(character)
                used += w
            }
            out += "…"
            used += 1
        }
        return out + String(repeating: " ", count: max(0, columns - used))
    }

    /// A table row: each cell made inert by `clean`, then in its column of `widths`
    /// (``fitted(_:_:)``), the cells past them as they are, two spaces between.
    static func row(_ cells: [String], widths: [Int], clean: (String) -> String = { $0 }) -> String {
        var row = ""
        row.reserveCapacity(160)
        for (i, cell) in cells.enumerated() {
            if i > 0 { row += "  " }
            row += i < widths.count ? fitted(clean(cell), widths[i]) : clean(cell)
        }
        return row
    }

    /// East Asian Wide and Fullwidth ranges (Unicode's EastAsianWidth.txt, W and F), condensed.
    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF, 0x1F200...0x1F251,
            0x20000...0x2FFFD, 0x30000...0x3FFFD:
            true
        default: false
        }
    }
}
