import Foundation

/// Reading an object member by member, straight into a model, without a `JSONValue` tree.
///
/// Used by the models' JSON Lines readers (`Article(jsonLine:)`): a dump line is read once, each
/// member's value converted as it is met, so a load costs one pass over the bytes and the
/// strings it keeps. Errors carry the member's path (`keywords[2].rank`) so the loader can name
/// the field.
extension JSONByteReader {
    /// A member name: a range of the input when it has no escapes (always, in practice), else
    /// its decoded bytes.
    enum MemberName {
        case raw(Range<Int>)
        case decoded([UInt8])
    }

    /// The JSON type of the value at the cursor, for error messages ("string", "number", ...).
    var foundTypeName: String {
        guard position < bytes.count else { return "the end of the line" }
        switch bytes[position] {
        case UInt8(ascii: "\""): return "a string"
        case UInt8(ascii: "{"): return "an object"
        case UInt8(ascii: "["): return "an array"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return "a boolean"
        case UInt8(ascii: "n"): return "null"
        default:
            var end = position
            while end < bytes.count, end - position < 24, !isDelimiter(bytes[end]) { end += 1 }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[position..<end]), as: UTF8.self)
            let first = bytes[position]
            let isNumber = first == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first)
            return isNumber ? "the number \(text)" : "'\(text)', which is not JSON"
        }
    }

    private func isDelimiter(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") || byte == 0x20
    }

    /// True (and the `null` consumed) when the value at the cursor is `null`.
    mutating func takeNull() throws(NewsMappingError) -> Bool {
        skipWhitespace()
        guard position < bytes.count else { throw truncated }
        guard bytes[position] == UInt8(ascii: "n") else { return false }
        try parseLiteral("null")
        return true
    }

    /// Consumes the `{` of an object, or throws a type mismatch naming what is there instead.
    mutating func beginObject() throws(NewsMappingError) {
        try begin(UInt8(ascii: "{"), expected: "an object")
    }

    /// Consumes the `[` of an array, or throws a type mismatch naming what is there instead.
    mutating func beginArray() throws(NewsMappingError) {
        try begin(UInt8(ascii: "["), expected: "an array")
    }

    private mutating func begin(_ bracket: UInt8, expected: String) throws(NewsMappingError) {
        skipWhitespace()
        guard position < bytes.count else { throw truncated }
        guard bytes[position] == bracket else {
            throw NewsMappingError(.typeMismatch(expected: expected, found: foundTypeName))
        }
        try enter()
        position += 1
    }

    /// The next member's name (its `:` consumed), or nil at the object's `}` (consumed).
    /// `first` tells whether a member was read before; it is updated.
    mutating func nextMember(first: inout Bool) throws(NewsMappingError) -> MemberName? {
        skipWhitespace()
        guard position < bytes.count else { throw truncated }
        if bytes[position] == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return nil
        }
        if !first {
            guard bytes[position] == UInt8(ascii: ",") else { throw malformed("expected ',' or '}' in an object") }
            position += 1
            skipWhitespace()
            guard position < bytes.count else { throw truncated }
        }
        first = false
        guard bytes[position] == UInt8(ascii: "\"") else { throw malformed("expected a member name") }
        let start = position + 1
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 {
            end += 1
        }
        let name: MemberName
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            position = end + 1
            name = .raw(start..<end)
        } else {
            name = .decoded(Array(try parseString().utf8))
        }
        skipWhitespace()
        guard position < bytes.count else { throw truncated }
        guard bytes[position] == UInt8(ascii: ":") else { throw malformed("expected ':' after a member name") }
        position += 1
        return name
    }

    /// Which of `names` the member is, or nil for a name not among them. Tries `hint` first:
    /// a dump writes members in declaration order, so the member after the last one matched
    /// is nearly always the next.
    func match(_ name: MemberName, in names: [[UInt8]], hint: Int) -> Int? {
        func equal(_ candidate: [UInt8]) -> Bool {
            switch name {
            case .raw(let range):
                guard candidate.count == range.count else { return false }
                return candidate.withUnsafeBufferPointer { c in
                    for i in 0..<c.count where c[i] != bytes[range.lowerBound + i] { return false }
                    return true
                }
            case .decoded(let decoded): return candidate == decoded
            }
        }
        if hint < names.count, equal(names[hint]) { return hint }
        for i in names.indices where i != hint && equal(names[i]) { return i }
        return nil
    }

    /// The member's name as text, for an error.
    func text(of name: MemberName) -> String {
        switch name {
        case .raw(let range): String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        case .decoded(let decoded): String(decoding: decoded, as: UTF8.self)
        }
    }

    /// A string, or nil for `null`; any other type is a mismatch.
    mutating func optionalString() throws(NewsMappingError) -> String? {
        if try takeNull() { return nil }
        return try string()
    }

    /// A string; `null` or any other type is a mismatch.
    mutating func string() throws(NewsMappingError) -> String {
        skipWhitespace()
        guard position < bytes.count else { throw truncated }
        guard bytes[position] == UInt8(ascii: "\"") else {
            throw NewsMappingError(.typeMismatch(expected: "a string", found: foundTypeName))
        }
        return try parseString()
    }

    /// A whole number, or nil for `null`. A fraction or exponent (`3.7`, `1e3`), a number beyond
    /// `Int`, or another type is an error: nothing is rounded or truncated silently.
    mutating func optionalInt() throws(NewsMappingError) -> Int? {
        if try takeNull() { return nil }
        skipWhitespace()
        guard position < bytes.count else { throw truncated }
        let byte = bytes[position]
        guard byte == UInt8(ascii: "-") || byte &- UInt8(ascii: "0") < 10 else {
            throw NewsMappingError(.typeMismatch(expected: "a whole number", found: foundTypeName))
        }
        let start = position
        let value = try parseNumber()
        guard case .int(let int) = value else {
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
            let isIntegral = text.allSatisfy { $0 == "-" || $0.isASCII && $0.isNumber }
            throw NewsMappingError(
                .invalidValue(
                    isIntegral ? "\(text) is out of range for a whole number (at most 19 digits)"
                        : "expected a whole number written without a fraction or an exponent, found \(text)"))
        }
        return int
    }

    /// A date in any form ``NewsDate`` reads, or nil for `null`.
    mutating func optionalDate() throws(NewsMappingError) -> Date? {
        if try takeNull() { return nil }
        skipWhitespace()
        guard position < bytes.count else { throw truncated }
        guard bytes[position] == UInt8(ascii: "\"") else {
            throw NewsMappingError(.typeMismatch(expected: "a date string", found: foundTypeName))
        }
        // Dumped dates have no escapes: read them in place, without making a string.
        let start = position + 1
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 {
            end += 1
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            position = end + 1
            let text = UnsafeBufferPointer(rebasing: bytes[start..<end])
            if let date = NewsDate.iso8601(text) ?? NewsDate.rfc822(text) { return date }
            throw NewsMappingError(.invalidDate(String(decoding: text, as: UTF8.self)))
        }
        let text = try parseString()
        guard let date = NewsDate.parse(text) else { throw NewsMappingError(.invalidDate(text)) }
        return date
    }

    /// An array read element by element with `element`, or nil for `null`.
    mutating func optionalArray<T>(
        _ element: (inout JSONByteReader) throws(NewsMappingError) -> T
    ) throws(NewsMappingError) -> [T]? {
        if try takeNull() { return nil }
        try beginArray()
        var out: [T] = []
        skipWhitespace()
        guard position < bytes.count else { throw truncated }
        if bytes[position] == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return out
        }
        while true {
            do throws(NewsMappingError) {
                out.append(try element(&self))
            } catch {
                throw error.prefixed(by: [.index(out.count)])
            }
            skipWhitespace()
            guard position < bytes.count else { throw truncated }
            switch bytes[position] {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                depth -= 1
                return out
            default: throw malformed("expected ',' or ']' in an array")
            }
        }
    }

    /// Checks that only whitespace follows the value just read.
    mutating func expectEnd() throws(NewsMappingError) {
        skipWhitespace()
        if position != bytes.count { throw malformed("unexpected data after the record") }
    }
}

extension NewsMappingError {
    /// An unknown member `name`: the line is not a record of the model (`kind` is "an article").
    static func unknownField(_ name: String, in kind: String) -> NewsMappingError {
        NewsMappingError(.invalidValue("unknown field, not \(kind) (a dump of another collection?)"), at: [.key(name)])
    }
}
