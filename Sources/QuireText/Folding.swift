internal import Foundation

/// How the tokenizer treats one Unicode scalar, and what it folds to.
///
/// Computed once per scalar below ``ScalarTable/tableLimit`` (a process-wide table built on first
/// use) and on the fly, with a per-tokenizer cache, above it.
struct ScalarClass: Sendable, Equatable {
    /// What the scalar is for word breaking.
    enum Kind: UInt8, Sendable {
        /// Ends a word (spaces, punctuation, symbols, emoji).
        case separator
        /// Part of a word (letters, digits, private use, marks that stay).
        case word
        /// A combining diacritic: part of the word, dropped when diacritics are folded.
        case diacritic
        /// Chinese or Japanese: indexed as overlapping bigrams.
        case ideographic
        /// A hyphen: ends a word but may join it to the next one (`covid-19`).
        case hyphen
        /// Invisible and skipped: variation selectors (the `U+FE0F` of `⚽️`), the soft hyphen, and
        /// format characters but the zero-width space (joiners, `U+2060`, `U+FEFF`, directional
        /// marks); neither a word character nor a separator.
        case ignorable
    }

    var kind: Kind
    /// The scalar after case folding (and, for Latin letters, diacritics folding when `folded` is
    /// used); equal to the input scalar when nothing changes.
    var lowered: UInt32
    /// `lowered` with a Latin diacritic removed (`é` → `e`), else `lowered`.
    var folded: UInt32
    /// ``combines`` (bit 0), ``isFormat`` (bit 1) and ``isRevised`` (bit 2): the tokenizer's
    /// loop tests one byte.
    var flags: UInt8 = 0

    /// A combining mark or a Hangul vowel or final consonant: it may compose with the scalar
    /// before it into one (NFC: `и` + U+0306 is `й`).
    var combines: Bool {
        get { flags & 1 != 0 }
        set { flags = newValue ? flags | 1 : flags & ~1 }
    }
    /// An invisible format character that revision 2 skips and revision 1 treated as a separator.
    var isFormat: Bool { flags & 2 != 0 }
    /// Revision 3 or 4 reads the scalar as other scalars (``ScalarTable/revisedForm(_:revision:foldDiacritics:)``).
    var isRevised: Bool { flags & 4 != 0 }

    init(kind: Kind, lowered: UInt32, folded: UInt32, flags: UInt8 = 0) {
        self.kind = kind
        self.lowered = lowered
        self.folded = folded
        self.flags = flags
    }
}

enum ScalarTable {
    /// Scalars below this are classified by a table built once per process.
    static let tableLimit: UInt32 = 0x3100

    /// The table for scalars `0..<tableLimit`, packed as `kind << 48 | lowered << 24 | folded`.
    static let table: [UInt64] = {
        var table = [UInt64](repeating: 0, count: Int(tableLimit))
        for value in 0..<tableLimit {
            let c = classify(value)
            table[Int(value)] =
                UInt64(c.flags) << 56 | UInt64(c.kind.rawValue) << 48 | UInt64(c.lowered) << 24 | UInt64(c.folded)
        }
        return table
    }()

    /// The same table at a fixed address (allocated once, never freed, never written after), so the
    /// tokenizer's loop indexes it without a closure or a bounds-checked array access.
    nonisolated(unsafe) static let pointer: UnsafePointer<UInt64> = {
        let p = UnsafeMutablePointer<UInt64>.allocate(capacity: Int(tableLimit))
        for (index, packed) in table.enumerated() { (p + index).initialize(to: packed) }
        return UnsafePointer(p)
    }()

    @inline(__always)
    static func unpack(_ packed: UInt64) -> ScalarClass {
        ScalarClass(
            kind: ScalarClass.Kind(rawValue: UInt8(truncatingIfNeeded: packed >> 48)) ?? .separator,
            lowered: UInt32(truncatingIfNeeded: packed >> 24) & 0xFF_FFFF,
            folded: UInt32(truncatingIfNeeded: packed) & 0xFF_FFFF,
            flags: UInt8(truncatingIfNeeded: packed >> 56))
    }

    /// Whether `value` is Chinese or Japanese (Han, Hiragana, Katakana and their extensions).
    static func isIdeographic(_ value: UInt32) -> Bool {
        switch value {
        case 0x3040...0x30FF, 0x31F0...0x31FF,  // Hiragana, Katakana, Katakana phonetic extensions
            0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF,  // CJK ideographs, extension A, compatibility
            0xFF66...0xFF9F,  // halfwidth Katakana
            0x20000...0x3FFFF:  // CJK extensions B and later
            return true
        default:
            return false
        }
    }

    /// Whether `value` is in the Greek or the Greek Extended block.
    static func isGreek(_ value: UInt32) -> Bool {
        (0x0370...0x03FF).contains(value) || (0x1F00...0x1FFF).contains(value)
    }

    /// Whether `value` is in the Arabic block, its supplement or its extension A.
    static func isArabic(_ value: UInt32) -> Bool {
        (0x0600...0x06FF).contains(value) || (0x0750...0x077F).contains(value) || (0x08A0...0x08FF).contains(value)
    }

    /// Whether `value` is a Han ideograph (of the unified, extension or compatibility blocks).
    static func isHan(_ value: UInt32) -> Bool {
        switch value {
        case 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x3FFFF: return true
        default: return false
        }
    }

    /// Combining diacritical marks that diacritics folding drops.
    static func isFoldableMark(_ value: UInt32) -> Bool {
        switch value {
        case 0x0300...0x036F, 0x1AB0...0x1AFF, 0x1DC0...0x1DFF, 0x20D0...0x20FF, 0xFE20...0xFE2F: return true
        case 0x0591...0x05BD, 0x05BF, 0x05C1...0x05C2, 0x05C4...0x05C5, 0x05C7: return true  // Hebrew points
        case 0x0610...0x061A, 0x064B...0x065F, 0x0670, 0x06D6...0x06DC, 0x06DF...0x06E4: return true  // Arabic harakat
        default: return false
        }
    }

    /// The accents whose Latin letters decompose canonically into an ASCII letter and combining marks
    /// (the names Unicode gives after `WITH`). Letters with a stroke, bar or hook (`ø`, `ł`, `đ`) do
    /// not decompose and are kept, as SQLite FTS5's `remove_diacritics 2` keeps them.
    static let decomposableAccents: Set<Substring> = [
        "ACUTE", "GRAVE", "CIRCUMFLEX", "TILDE", "DIAERESIS", "RING ABOVE", "CEDILLA", "CARON", "MACRON",
        "BREVE", "DOT ABOVE", "DOT BELOW", "OGONEK", "DOUBLE ACUTE", "HOOK ABOVE", "HORN", "COMMA BELOW",
        "DOUBLE GRAVE", "INVERTED BREVE", "RING BELOW", "LINE BELOW", "CIRCUMFLEX BELOW", "BREVE BELOW",
        "TILDE BELOW", "DIAERESIS BELOW", "MACRON BELOW",
    ]

    /// The ASCII base of a Latin letter with decomposable accents (`é` → `e`), or nil.
    static func latinBase(_ scalar: Unicode.Scalar) -> UInt32? {
        guard let name = scalar.properties.name else { return nil }
        let prefixes = ["LATIN SMALL LETTER ", "LATIN CAPITAL LETTER "]
        guard let prefix = prefixes.first(where: { name.hasPrefix($0) }) else { return nil }
        let rest = name.dropFirst(prefix.count)
        guard rest.count > 7, let letter = rest.first, letter.isASCII, letter.isLetter,
            rest.dropFirst().hasPrefix(" WITH ")
        else { return nil }
        let accents = rest.dropFirst(7)
        for part in accents.split(separator: " AND ") where !decomposableAccents.contains(part) { return nil }
        return letter.lowercased().unicodeScalars.first.map(\.value)
    }

    /// The class of any scalar, from its Unicode properties (slow; cached by the callers).
    static func classify(_ value: UInt32) -> ScalarClass {
        var c = classifyKind(value)
        if value >= 0x300, let scalar = Unicode.Scalar(value) {
            let properties = scalar.properties
            // What may follow a letter and compose with it: marks of a combining class, spacing
            // marks, the four nonspacing marks of class 0 that compose (Oriya, Myanmar, Chakma,
            // Tirhuta) and Hangul vowels and final consonants.
            c.combines =
                properties.canonicalCombiningClass != .notReordered || properties.generalCategory == .spacingMark
                || [0x0B56, 0x102E, 0x11127, 0x114BA].contains(value)
                || (0x1161...0x1175).contains(value) || (0x11A8...0x11C2).contains(value)
        }
        if revisedForm(value, revision: TokenizerOptions.currentRevision, foldDiacritics: true) != nil { c.flags |= 4 }
        return c
    }

    /// What revision 3 reads a scalar as, when not as itself (slow: callers cache it):
    /// - a letter, number or mark's compatibility form (NFKC, which includes NFC's singletons and
    ///   the decompositions of composition exclusions): `ﬁ` is `f i`, `𝐁` is `B`, `²` is `2`,
    ///   `Ⅻ` is `X I I`, halfwidth `ｶ` is `カ`, `ά` (oxia) is `ά` (tonos), `क़` is `क` + nukta;
    ///   symbols keep their class (`™` stays a separator, not the letters `TM`), and so do vulgar
    ///   fractions (`½`);
    /// - the kana voiced sound marks U+3099 and U+309A as themselves: they compose with the kana
    ///   before them (revision 2 took them for ideographs);
    /// - a space for the Japanese punctuation inside the kana blocks (`・`, `゠`, `゛`, `゜`),
    ///   which revision 2 took for letters;
    /// - a Greek letter with accents or breathings as its canonical decomposition (`ά` is `α` and
    ///   U+0301), whose marks diacritics folding drops (the tokenizer composes them again when it
    ///   keeps diacritics), and the final sigma `ς` as `σ` (Unicode case folding's).
    ///
    /// Revision 4 reads each scalar of that (or the scalar itself) further:
    /// - `ß` and `ẞ` as `ss` (Unicode's full case folding: `Straße` is `strasse`);
    /// - with diacritics folding, the dotless `ı` as `i`, as the Latin letters' accents fold;
    /// - an Arabic letter with hamza or madda as its canonical decomposition (`أ` is `ا` and
    ///   U+0654), whose mark diacritics folding drops as it drops the harakat; the tatweel (`ـ`,
    ///   which only stretches a word) as nothing;
    /// - a decimal digit of any script as the ASCII digit (`٢٠٢٤` is `2024`).
    static func revisedForm(_ value: UInt32, revision: Int, foldDiacritics: Bool) -> [UInt32]? {
        let third = revision >= 3 ? thirdRevisionForm(value) : nil
        guard revision >= 4 else { return third }
        let parts = third ?? [value]
        var form: [UInt32] = []
        for part in parts { form += fourthRevisionForm(part, foldDiacritics: foldDiacritics) ?? [part] }
        return third == nil && form == [value] ? nil : form
    }

    /// Revision 4's reading of one scalar beyond revision 3's, or nil.
    private static func fourthRevisionForm(_ value: UInt32, foldDiacritics: Bool) -> [UInt32]? {
        switch value {
        case 0x00DF, 0x1E9E: return [0x73, 0x73]
        case 0x0131: return foldDiacritics ? [0x69] : nil
        case 0x0640: return []
        case 0x30...0x39, 0xFF10...0xFF19: return nil  // folded to ASCII digits by every revision
        default: break
        }
        guard value >= 0x80, let scalar = Unicode.Scalar(value) else { return nil }
        let properties = scalar.properties
        if properties.numericType == .decimal, let digit = properties.numericValue, (0...9).contains(digit) {
            return [0x30 + UInt32(digit)]
        }
        if isArabic(value), properties.isAlphabetic {
            let parts = String(scalar).decomposedStringWithCanonicalMapping.unicodeScalars.map(\.value)
            if parts.count > 1, isArabic(parts[0]) { return parts }
        }
        return nil
    }

    /// Revision 3's reading of a scalar, or nil (see ``revisedForm(_:revision:foldDiacritics:)``).
    private static func thirdRevisionForm(_ value: UInt32) -> [UInt32]? {
        switch value {
        case 0x3099, 0x309A: return [value]
        case 0x309B, 0x309C, 0x30A0, 0x30FB: return [0x20]
        case 0xFF01...0xFF5E: return nil  // fullwidth ASCII: folded by every revision already
        case 0x03C2: return [0x03C3]
        default: break
        }
        if isGreek(value), let scalar = Unicode.Scalar(value), scalar.properties.isAlphabetic {
            let parts = String(scalar).decomposedStringWithCanonicalMapping.unicodeScalars.map(\.value)
            if parts.count > 1, isGreek(parts[0]) { return parts }
        }
        guard value >= 0xA0, let scalar = Unicode.Scalar(value), scalar.properties.changesWhenNFKCCaseFolded else { return nil }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .decimalNumber,
            .letterNumber, .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark:
            let form = String(scalar).precomposedStringWithCompatibilityMapping.unicodeScalars.map(\.value)
            // A vulgar fraction stays one word (`½`, as FTS5 has it), not the digits around a slash.
            return form == [value] || form.isEmpty || form.contains(0x2044) ? nil : form
        default:
            return nil
        }
    }

    /// The scalar that `base` and `mark` compose into (canonical composition, as NFC makes it),
    /// or nil. Slow: callers cache it.
    static func composed(_ base: UInt32, _ mark: UInt32) -> UInt32? {
        guard let b = Unicode.Scalar(base), let m = Unicode.Scalar(mark) else { return nil }
        var pair = String(b)
        pair.unicodeScalars.append(m)
        // The standard library's own NFC (public, underscored; what Foundation's normalization uses).
        let scalars = String(decoding: pair._nfcCodeUnits, as: UTF8.self).unicodeScalars
        guard scalars.count == 1, let single = scalars.first else { return nil }
        return single.value
    }

    private static func classifyKind(_ value: UInt32) -> ScalarClass {
        guard let scalar = Unicode.Scalar(value) else { return ScalarClass(kind: .separator, lowered: value, folded: value) }
        if value < 0x80 {
            switch value {
            case 0x30...0x39, 0x61...0x7A: return ScalarClass(kind: .word, lowered: value, folded: value)
            case 0x41...0x5A: return ScalarClass(kind: .word, lowered: value + 0x20, folded: value + 0x20)
            case 0x2D: return ScalarClass(kind: .hyphen, lowered: value, folded: value)
            default: return ScalarClass(kind: .separator, lowered: value, folded: value)
            }
        }
        // Fullwidth ASCII letters and digits fold to ASCII.
        if (0xFF10...0xFF19).contains(value) { return ScalarClass(kind: .word, lowered: value - 0xFEE0, folded: value - 0xFEE0) }
        if (0xFF21...0xFF3A).contains(value) { return ScalarClass(kind: .word, lowered: value - 0xFEC0, folded: value - 0xFEC0) }
        if (0xFF41...0xFF5A).contains(value) { return ScalarClass(kind: .word, lowered: value - 0xFEE0, folded: value - 0xFEE0) }
        if value == 0x2010 || value == 0x2011 { return ScalarClass(kind: .hyphen, lowered: value, folded: value) }
        switch value {
        case 0x200B:
            // The zero-width space is written to mark a word break (UAX #29 does not count it as a format character).
            return ScalarClass(kind: .separator, lowered: value, folded: value)
        case 0x00AD, 0x200C, 0xFE00...0xFE0F, 0xE0100...0xE01EF:
            return ScalarClass(kind: .ignorable, lowered: value, folded: value)
        default: break
        }
        // Invisible format characters (word joiner, byte order mark, zero-width joiner, directional
        // marks): UAX #29 skips them inside a word, and text pasted from the web is full of them.
        if scalar.properties.generalCategory == .format {
            return ScalarClass(kind: .ignorable, lowered: value, folded: value, flags: 2)
        }
        if isIdeographic(value) {
            // Katakana's prolonged sound mark and iteration marks are letters of the run too.
            return ScalarClass(kind: .ideographic, lowered: value, folded: value)
        }
        let properties = scalar.properties
        switch properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber, .privateUse:
            var lowered = value
            if properties.changesWhenLowercased, let first = properties.lowercaseMapping.unicodeScalars.first {
                lowered = first.value
            }
            var folded = lowered
            if lowered >= 0xC0, let loweredScalar = Unicode.Scalar(lowered), let base = latinBase(loweredScalar) {
                folded = base
            }
            return ScalarClass(kind: .word, lowered: lowered, folded: folded)
        case .nonspacingMark, .spacingMark, .enclosingMark:
            return ScalarClass(kind: isFoldableMark(value) ? .diacritic : .word, lowered: value, folded: value)
        default:
            return ScalarClass(kind: .separator, lowered: value, folded: value)
        }
    }
}
