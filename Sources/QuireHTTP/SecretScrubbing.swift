/// Removes every form of a secret from text that came from outside: the literal value and its
/// encoded spellings a server might echo back.
///
/// A secret is matched byte by byte, where each byte of the secret may appear
/// - as itself, ASCII letters in either case (a server that lower- or upper-cases the query);
/// - percent-encoded, `%4b` or `%4B`, and double-encoded, `%254B` (a URL quoted in a URL);
/// - as `+` for a space (form encoding);
/// - JSON-escaped, `\u004b`, and a slash as `\/`, a tab as `\t` (a document that quotes the
///   request);
/// - as an HTML character reference, `&#75;`, `&#x4b;` or `&amp;` (mapping decodes them: a key
///   so spelled in a document would be whole again in the stored article).
///
/// A character outside ASCII is matched as its UTF-8 bytes (literal or percent-encoded), as one
/// JSON escape (`\u00e9`, or a surrogate pair), as a numeric character reference (`&#233;`),
/// and in its other letter case (`É` for `é`), in each of those forms.
///
/// Forms are tried as alternatives, not first-come: a key holding `%` is found in `%25…` too.
/// Each form may be mixed with the others inside one occurrence. An occurrence must be a whole
/// token: a secret that starts (ends) with a letter or digit is not matched right after (before)
/// another letter or digit, so a short key is not cut out of words ("doe" of "does") or numbers.
/// Matches are replaced by ``URLRedaction/placeholder``. The scan is linear in the text for a
/// fixed secret.
extension URLRedaction {
    /// `text` with every occurrence of `secret`, in any of its encoded or case-folded forms,
    /// replaced by ``placeholder``. An empty secret leaves the text unchanged.
    package static func scrubSecret(_ secret: String, from text: String) -> String {
        guard !secret.isEmpty, !text.isEmpty else { return text }
        let scrubbed = scrub(Array(secret.utf8), from: Array(text.utf8))
        return String(decoding: scrubbed, as: UTF8.self)
    }

    /// `bytes` (a raw document, a response body) with every form of `secret` replaced by
    /// ``placeholder``, as ``scrubSecret(_:from:)`` does for text.
    package static func scrubSecret(_ secret: String, fromBytes bytes: [UInt8]) -> [UInt8] {
        scrub(Array(secret.utf8), from: bytes)
    }

    private static func scrub(_ secret: [UInt8], from bytes: [UInt8]) -> [UInt8] {
        guard !secret.isEmpty, !bytes.isEmpty else { return bytes }
        let key = SecretPattern(secret)
        var output: [UInt8] = []
        var index = 0
        var copiedUpTo = 0
        while index < bytes.count {
            if let end = matchEnd(of: key, in: bytes, at: index) {
                if output.isEmpty { output.reserveCapacity(bytes.count) }
                output.append(contentsOf: bytes[copiedUpTo..<index])
                output.append(contentsOf: placeholder.utf8)
                index = end
                copiedUpTo = end
            } else {
                index += 1
            }
        }
        if copiedUpTo == 0 { return bytes }
        output.append(contentsOf: bytes[copiedUpTo...])
        return output
    }

    /// True when `text` holds `secret` in any form ``scrubSecret(_:from:)`` removes.
    package static func containsSecret(_ secret: String, in text: String) -> Bool {
        guard !secret.isEmpty else { return false }
        let key = SecretPattern(Array(secret.utf8))
        let bytes = Array(text.utf8)
        for index in bytes.indices where matchEnd(of: key, in: bytes, at: index) != nil { return true }
        return false
    }

    /// Where an occurrence of `key` starting at `start` ends, or nil when none starts there (or
    /// one does but is part of a longer word or number).
    ///
    /// Every form of each byte is followed (a set of positions, not one guess): `%` of the key
    /// may be a literal `%` or the start of `%25`, and only one of them goes on to match. A
    /// character outside ASCII may also be matched whole, which moves on by all its bytes.
    private static func matchEnd(of pattern: SecretPattern, in bytes: [UInt8], at start: Int) -> Int? {
        let key = pattern.bytes
        // Most bytes of a body start no form of the key's first byte: said without allocating.
        switch bytes[start] {
        case UInt8(ascii: "%"), UInt8(ascii: "\\"), UInt8(ascii: "&"), UInt8(ascii: "+"): break
        case let first where first >= 0x80 && key[0] >= 0x80: break  // another case of the letter
        case let first: guard foldCase(first) == foldCase(key[0]) else { return nil }
        }
        if isWordByte(key[0]), let before = byteEnding(at: start, in: bytes), isWordByte(before) { return nil }
        // Where each reading of the key's first k bytes may end in `bytes`.
        var reached = [[Int]](repeating: [], count: key.count + 1)
        reached[0] = [start]
        for k in key.indices where !reached[k].isEmpty {
            for position in reached[k] {
                for end in formEnds(key[k], in: bytes, at: position) where !reached[k + 1].contains(end) {
                    reached[k + 1].append(end)
                }
                guard let scalar = pattern.scalars[k] else { continue }
                let after = k + scalar.utf8Count
                for end in scalarFormEnds(scalar.scalar, in: bytes, at: position) where !reached[after].contains(end) {
                    reached[after].append(end)
                }
            }
        }
        // The longest occurrence that ends a token.
        for position in reached[key.count].sorted(by: >) {
            if isWordByte(key[key.count - 1]), position < bytes.count,
                let after = matchAnyByte(in: bytes, at: position), isWordByte(after.byte)
            {
                continue
            }
            return position
        }
        return nil
    }

    /// The byte that the literal or encoded form ending just before `end` spells (`%41`, `\u0041`
    /// or `A` all spell `A`; a JSON escape such as `\n` or `\u2019` spells no letter or digit, so
    /// it reads as a space), or nil at the start.
    private static func byteEnding(at end: Int, in bytes: [UInt8]) -> UInt8? {
        guard end > 0 else { return nil }
        if end >= 5, bytes[end - 5] == UInt8(ascii: "%"), hexByte(bytes, at: end - 4) == UInt8(ascii: "%"),
            let byte = hexByte(bytes, at: end - 2)
        {
            return byte  // double-encoded, `%253D`
        }
        if end >= 3, bytes[end - 3] == UInt8(ascii: "%"), let byte = hexByte(bytes, at: end - 2) { return byte }
        if end >= 6, isEscape(at: end - 6, in: bytes), bytes[end - 5] | 0x20 == UInt8(ascii: "u"),
            let high = hexByte(bytes, at: end - 4), let low = hexByte(bytes, at: end - 2)
        {
            return high == 0 && low < 0x80 ? low : 0x20
        }
        if end >= 2, isEscape(at: end - 2, in: bytes) { return 0x20 }  // `\n`, `\t`, `\"`, `\\`
        if bytes[end - 1] == UInt8(ascii: ";") {
            for start in stride(from: end - 3, through: max(0, end - 16), by: -1) where bytes[start] == UInt8(ascii: "&") {
                if let reference = characterReference(in: bytes, at: start), reference.end == end { return reference.byte }
                break
            }
        }
        return bytes[end - 1]
    }

    /// Whether the backslash at `index` starts an escape: preceded by an even number of backslashes.
    private static func isEscape(at index: Int, in bytes: [UInt8]) -> Bool {
        guard bytes[index] == UInt8(ascii: "\\") else { return false }
        var before = index
        while before > 0, bytes[before - 1] == UInt8(ascii: "\\") { before -= 1 }
        return (index - before) % 2 == 0
    }

    /// The byte that the literal or encoded form starting at `index` spells, and where it ends.
    private static func matchAnyByte(in bytes: [UInt8], at index: Int) -> (byte: UInt8, end: Int)? {
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "%"), let byte = hexByte(bytes, at: index + 1) { return (byte, index + 3) }
        if let reference = characterReference(in: bytes, at: index) { return (reference.byte, reference.end) }
        return jsonByte(in: bytes, at: index)
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): true
        default: false
        }
    }

    /// Where each encoded or literal form of `byte` starting at `index` ends (none, one, or more
    /// than one when forms overlap).
    private static func formEnds(_ byte: UInt8, in bytes: [UInt8], at index: Int) -> [Int] {
        guard index < bytes.count else { return [] }
        var ends: [Int] = []
        let found = bytes[index]
        if foldCase(found) == foldCase(byte) { ends.append(index + 1) }
        if found == UInt8(ascii: "+") && byte == UInt8(ascii: " ") { ends.append(index + 1) }
        // JSON's two-byte escapes: a slash (the NYT writes `http:\/\/`), and the quote and the
        // backslash a key may hold (`\"`, `\\`).
        if found == UInt8(ascii: "\\"), byte == UInt8(ascii: "/") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\"),
            index + 1 < bytes.count, bytes[index + 1] == byte
        {
            ends.append(index + 2)
        }
        // And the control characters JSON writes as a letter (`\t`).
        if found == UInt8(ascii: "\\"), index + 1 < bytes.count, let escaped = controlEscapes[bytes[index + 1]], escaped == byte {
            ends.append(index + 2)
        }
        if found == UInt8(ascii: "%") {
            if hexByte(bytes, at: index + 1) == byte { ends.append(index + 3) }
            // %25 is an encoded '%': a double-encoded byte.
            if hexByte(bytes, at: index + 1) == UInt8(ascii: "%"), hexByte(bytes, at: index + 3) == byte {
                ends.append(index + 5)
            }
        }
        if found == UInt8(ascii: "\\"), let escape = jsonByte(in: bytes, at: index), escape.end == index + 6, escape.byte == byte {
            ends.append(escape.end)
        }
        if found == UInt8(ascii: "&") || found == UInt8(ascii: "\\"), let reference = characterReference(in: bytes, at: index),
            reference.byte == byte
        {
            ends.append(reference.end)
        }
        return ends
    }

    /// The control characters JSON escapes with a letter, by that letter.
    private static let controlEscapes: [UInt8: UInt8] = [
        UInt8(ascii: "b"): 0x08, UInt8(ascii: "f"): 0x0C, UInt8(ascii: "n"): 0x0A, UInt8(ascii: "r"): 0x0D, UInt8(ascii: "t"): 0x09,
    ]

    /// Where each whole-character form of `scalar` (outside ASCII) starting at `index` ends: the
    /// character in its other letter cases (UTF-8), and each case as a JSON escape (a surrogate
    /// pair above U+FFFF) or a numeric character reference.
    private static func scalarFormEnds(_ scalar: Unicode.Scalar, in bytes: [UInt8], at index: Int) -> [Int] {
        guard index < bytes.count else { return [] }
        var variants = [scalar]
        for mapping in [scalar.properties.lowercaseMapping, scalar.properties.uppercaseMapping] {
            if let other = mapping.unicodeScalars.first, mapping.unicodeScalars.count == 1, !variants.contains(other) {
                variants.append(other)
            }
        }
        var ends: [Int] = []
        for variant in variants.dropFirst() {
            let utf8 = Array(String(variant).utf8)
            if bytes.count - index >= utf8.count, bytes[index..<index + utf8.count].elementsEqual(utf8) {
                ends.append(index + utf8.count)
            }
        }
        if let escape = jsonScalar(in: bytes, at: index), variants.contains(where: { $0.value == escape.value }) {
            ends.append(escape.end)
        }
        if let reference = characterReference(in: bytes, at: index), variants.contains(where: { $0.value == reference.value }) {
            ends.append(reference.end)
        }
        return ends
    }

    /// The scalar a JSON `\uXXXX` escape at `index` spells (two escapes for a surrogate pair),
    /// and where it ends.
    private static func jsonScalar(in bytes: [UInt8], at index: Int) -> (value: UInt32, end: Int)? {
        func unit(at position: Int) -> UInt32? {
            guard position + 5 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] | 0x20 == UInt8(ascii: "u"),
                let high = hexByte(bytes, at: position + 2), let low = hexByte(bytes, at: position + 4)
            else { return nil }
            return UInt32(high) << 8 | UInt32(low)
        }
        guard let first = unit(at: index) else { return nil }
        guard (0xD800...0xDBFF).contains(first) else { return (first, index + 6) }
        guard let second = unit(at: index + 6), (0xDC00...0xDFFF).contains(second) else { return nil }
        return (0x10000 + ((first - 0xD800) << 10 | (second - 0xDC00)), index + 12)
    }

    /// The HTML character reference at `index` (`&#75;`, `&#x4B;`, `&amp;`, `&lt;`, `&gt;`,
    /// `&quot;`, `&apos;`; its characters may be JSON escapes, `\u0026#75;`, which the JSON
    /// parser undoes before mapping decodes the reference): the byte it spells (a space for a
    /// character outside ASCII, which is no letter or digit of a key) and where it ends; nil
    /// when there is none. As many digits as `NewsText.decodingEntities` reads. `value` is the
    /// character's code point.
    private static func characterReference(in bytes: [UInt8], at index: Int) -> (byte: UInt8, value: UInt32, end: Int)? {
        guard let amp = jsonByte(in: bytes, at: index), amp.byte == UInt8(ascii: "&"),
            let second = jsonByte(in: bytes, at: amp.end)
        else { return nil }
        if second.byte == UInt8(ascii: "#") {
            var position = second.end
            var hex = false
            if let x = jsonByte(in: bytes, at: position), x.byte | 0x20 == UInt8(ascii: "x") {
                hex = true
                position = x.end
            }
            var value: UInt64 = 0
            var digits = 0
            while digits < 11, let unit = jsonByte(in: bytes, at: position) {
                if hex, let nibble = hexValue(unit.byte) {
                    value = value << 4 | UInt64(nibble)
                } else if !hex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(unit.byte) {
                    value = value * 10 + UInt64(unit.byte - UInt8(ascii: "0"))
                } else {
                    break
                }
                digits += 1
                position = unit.end
            }
            guard digits > 0, let semicolon = jsonByte(in: bytes, at: position), semicolon.byte == UInt8(ascii: ";") else {
                return nil
            }
            return (value < 0x80 ? UInt8(value) : 0x20, UInt32(clamping: value), semicolon.end)
        }
        for (name, byte) in namedReferences {
            var position = amp.end
            var matched = true
            for expected in name {
                guard let unit = jsonByte(in: bytes, at: position), unit.byte == expected else {
                    matched = false
                    break
                }
                position = unit.end
            }
            if matched, let semicolon = jsonByte(in: bytes, at: position), semicolon.byte == UInt8(ascii: ";") {
                return (byte, UInt32(byte), semicolon.end)
            }
        }
        return nil
    }

    /// The byte at `index` as JSON text spells it (itself, or a `\u00XX` escape), and where it ends.
    private static func jsonByte(in bytes: [UInt8], at index: Int) -> (byte: UInt8, end: Int)? {
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "\\"), index + 5 < bytes.count, bytes[index + 1] | 0x20 == UInt8(ascii: "u"),
            hexByte(bytes, at: index + 2) == 0, let byte = hexByte(bytes, at: index + 4)
        {
            return (byte, index + 6)
        }
        return (bytes[index], index + 1)
    }

    /// The named references that spell ASCII punctuation a key may hold.
    private static let namedReferences: [([UInt8], UInt8)] = [
        (Array("amp".utf8), UInt8(ascii: "&")), (Array("lt".utf8), UInt8(ascii: "<")), (Array("gt".utf8), UInt8(ascii: ">")),
        (Array("quot".utf8), UInt8(ascii: "\"")), (Array("apos".utf8), UInt8(ascii: "'")),
    ]

    /// The byte spelled by two hex digits at `index`, either case, or nil.
    private static func hexByte(_ bytes: [UInt8], at index: Int) -> UInt8? {
        guard index + 1 < bytes.count, let high = hexValue(bytes[index]), let low = hexValue(bytes[index + 1]) else {
            return nil
        }
        return high << 4 | low
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func foldCase(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }
}

/// A secret's bytes (the UTF-8 of a `String`), with the characters outside ASCII that start at
/// each byte (matched whole in their escaped and case-changed forms).
private struct SecretPattern {
    let bytes: [UInt8]
    /// At the index of each character outside ASCII: the character; nil elsewhere.
    let scalars: [(scalar: Unicode.Scalar, utf8Count: Int)?]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        var scalars = [(scalar: Unicode.Scalar, utf8Count: Int)?](repeating: nil, count: bytes.count)
        var index = 0
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            let count = UTF8.width(scalar)
            if scalar.value >= 0x80, index < bytes.count { scalars[index] = (scalar, count) }
            index += count
        }
        self.scalars = scalars
    }
}
