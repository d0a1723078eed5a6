internal import QuireCodec

/// A small, strict JSON parser over bytes (RFC 8259).
///
/// Faster than `JSONSerialization` on the fetch path and precise when it fails: a
/// ``NewsMappingError`` says whether the input was cut short (``NewsMappingError/Kind/truncated(offset:)``)
/// or malformed at a byte offset, and its `path` names the member being parsed (`response.docs[7].headline`).
///
/// - `\uXXXX` escapes are decoded, surrogate pairs joined; an unpaired surrogate is an error.
/// - Strings must be valid UTF-8; raw control characters inside strings are rejected.
/// - Nesting deeper than `maxDepth` is rejected instead of exhausting the stack.
/// - Objects remember their byte range (see ``JSONObject/byteRange``).
public enum JSONParser {
    /// The default nesting limit for arrays and objects.
    public static let defaultMaxDepth = 512

    /// Parses one JSON document; only whitespace may follow it.
    ///
    /// - Throws: ``NewsMappingError`` with kind `.emptyBody`, `.truncated`, `.malformedJSON` or
    ///   `.depthLimitExceeded`.
    ///
    /// - Parameter acceptsControlCharacters: take a raw control character inside a string (a
    ///   line break an API left in a text; RFC 8259 wants it escaped) as it is, as the page
    ///   parsers do.
    public static func parse(
        _ bytes: [UInt8], maxDepth: Int = defaultMaxDepth, acceptsControlCharacters: Bool = false
    ) throws(NewsMappingError) -> JSONValue {
        let parsed = try parseDocument(
            bytes, maxDepth: maxDepth, settingAsideBadValues: false, acceptsControlCharacters: acceptsControlCharacters)
        return parsed.value
    }

    /// Parses one JSON document as ``parse(_:maxDepth:acceptsControlCharacters:)`` does (taking
    /// raw control characters in strings), except that an array or object nesting deeper than
    /// `maxDepth` (checked without recursion) and a string whose text is not valid become
    /// `null`; where such values were, and why, is returned beside the value, in input order
    /// (see `JSONByteReader+SetAside.swift`).
    static func parseSettingAsideBadValues(
        _ bytes: [UInt8], maxDepth: Int = defaultMaxDepth
    ) throws(NewsMappingError) -> (value: JSONValue, setAside: [SetAsideJSONValue]) {
        try parseDocument(bytes, maxDepth: maxDepth, settingAsideBadValues: true, acceptsControlCharacters: true)
    }

    private static func parseDocument(
        _ bytes: [UInt8], maxDepth: Int, settingAsideBadValues: Bool, acceptsControlCharacters: Bool
    ) throws(NewsMappingError) -> (value: JSONValue, setAside: [SetAsideJSONValue]) {
        typealias Parsed = (JSONValue, [SetAsideJSONValue])
        let result: Result<Parsed, NewsMappingError> = bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONByteReader(bytes: buffer, maxDepth: maxDepth)
            if settingAsideBadValues { reader.setAside = [] }
            reader.acceptsControlCharacters = acceptsControlCharacters
            do throws(NewsMappingError) {
                reader.skipWhitespace()
                if reader.position == buffer.count { throw NewsMappingError(.emptyBody) }
                let value = try reader.parseValue()
                reader.skipWhitespace()
                if reader.position != buffer.count {
                    throw NewsMappingError(.malformedJSON(offset: reader.position, reason: "unexpected data after the document"))
                }
                return .success((value, reader.setAside ?? []))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

/// The parser's cursor (also read member by member, see `JSONByteReader+Members.swift`). One per parse, never shared.
struct JSONByteReader {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var position = 0
    var depth = 0
    /// The values nesting too deeply or with bad text, when they are set aside rather than
    /// thrown (`nil`: they are an error). See `JSONByteReader+SetAside.swift`.
    var setAside: [SetAsideJSONValue]?
    /// Whether a raw control character in a string (a line break Feedzilla left in a summary)
    /// is taken as it is rather than an error: the string is still unambiguous.
    var acceptsControlCharacters = false
    /// Where the parse is, kept only while values are set aside (for their paths).
    var path: [JSONPathComponent] = []
    /// Reused scratch space for strings with escapes.
    var scratch: [UInt8] = []

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    var truncated: NewsMappingError { NewsMappingError(.truncated(offset: bytes.count)) }

    func malformed(_ reason: String, at offset: Int? = nil) -> NewsMappingError {
        NewsMappingError(.malformedJSON(offset: offset ?? position, reason: reason))
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    mutating func parseValue() throws(NewsMappingError) -> JSONValue {
        skipWhitespace()
        guard position < bytes.count else { throw truncated }
        switch bytes[position] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            if depth == maxDepth, setAside != nil { return try setAsideDeepValue() }
            return bytes[position] == UInt8(ascii: "{") ? try parseObject() : try parseArray()
        case UInt8(ascii: "\""):
            if setAside != nil { return try parseStringSettingAsideBadText() }
            return .string(try parseString())
        case UInt8(ascii: "t"): try parseLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try parseLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try parseLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw malformed("unexpected character '\(Character(Unicode.Scalar(bytes[position])))'")
        }
    }

    mutating func enter() throws(NewsMappingError) {
        depth += 1
        if depth > maxDepth { throw NewsMappingError(.depthLimitExceeded(offset: position)) }
    }

    mutating func parseObject() throws(NewsMappingError) -> JSONValue {
        let start = position
        try enter()
        position += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        guard position < bytes.count else { throw truncated }
        if bytes[position] == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return .object(JSONObject(members: members, byteRange: start..<position))
        }
        while true {
            skipWhitespace()
            guard position < bytes.count else { throw truncated }
            guard bytes[position] == UInt8(ascii: "\"") else { throw malformed("expected a member name") }
            // A name whose text is not valid is set aside like such a value (the document holding
            // it is rejected alone), and its member is dropped: `nameSetAside`.
            var key = ""
            var nameSetAside = false
            if setAside == nil {
                key = try parseString()
            } else if case .string(let name) = try parseStringSettingAsideBadText() {
                key = name
            } else {
                nameSetAside = true
            }
            skipWhitespace()
            guard position < bytes.count else { throw truncated.prefixed(by: [.key(key)]) }
            guard bytes[position] == UInt8(ascii: ":") else {
                throw malformed("expected ':' after a member name").prefixed(by: [.key(key)])
            }
            position += 1
            do throws(NewsMappingError) {
                if setAside == nil {
                    members[key] = try parseValue()
                } else {
                    path.append(.key(key))
                    let value = try parseValue()
                    if !nameSetAside { members[key] = value }
                    path.removeLast()
                }
            } catch {
                throw error.prefixed(by: [.key(key)])
            }
            skipWhitespace()
            guard position < bytes.count else { throw truncated }
            switch bytes[position] {
            case UInt8(ascii: ","):
                position += 1
            case UInt8(ascii: "}"):
                position += 1
                depth -= 1
                return .object(JSONObject(members: members, byteRange: start..<position))
            default:
                throw malformed("expected ',' or '}' in an object")
            }
        }
    }

    mutating func parseArray() throws(NewsMappingError) -> JSONValue {
        try enter()
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        guard position < bytes.count else { throw truncated }
        if bytes[position] == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            do throws(NewsMappingError) {
                if setAside == nil {
                    elements.append(try parseValue())
                } else {
                    path.append(.index(elements.count))
                    elements.append(try parseValue())
                    path.removeLast()
                }
            } catch {
                throw error.prefixed(by: [.index(elements.count)])
            }
            skipWhitespace()
            guard position < bytes.count else { throw truncated }
            switch bytes[position] {
            case UInt8(ascii: ","):
                position += 1
            case UInt8(ascii: "]"):
                position += 1
                depth -= 1
                return .array(elements)
            default:
                throw malformed("expected ',' or ']' in an array")
            }
        }
    }

    mutating func parseLiteral(_ word: StaticString) throws(NewsMappingError) {
        let count = word.utf8CodeUnitCount
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: count)
        for i in 0..<count {
            guard position + i < bytes.count else { throw truncated }
            guard bytes[position + i] == expected[i] else { throw malformed("invalid literal", at: position + i) }
        }
        position += count
    }

    mutating func parseNumber() throws(NewsMappingError) -> JSONValue {
        let start = position
        var negative = false
        if bytes[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        guard position < bytes.count else { throw truncated }
        guard isDigit(bytes[position]) else { throw malformed("expected a digit") }
        var integer = 0
        var overflow = false
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            while position < bytes.count, isDigit(bytes[position]) {
                let digit = Int(bytes[position] &- UInt8(ascii: "0"))
                // Negative numbers are summed downwards: Int.min has no positive twin.
                let (times, o1) = integer.multipliedReportingOverflow(by: 10)
                let (sum, o2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
                overflow = overflow || o1 || o2
                integer = sum
                position += 1
            }
        }
        var isInteger = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            try digits()
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            guard position < bytes.count else { throw truncated }
            if bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            try digits()
        }
        if isInteger && !overflow {
            return .int(integer)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text) else { throw malformed("number out of range", at: start) }
        return .double(value)
    }

    /// One or more digits (the fraction or the exponent of a number).
    mutating func digits() throws(NewsMappingError) {
        guard position < bytes.count else { throw truncated }
        guard isDigit(bytes[position]) else { throw malformed("expected a digit") }
        while position < bytes.count, isDigit(bytes[position]) { position += 1 }
    }

    func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    /// Parses a string starting at its opening quote.
    mutating func parseString() throws(NewsMappingError) -> String {
        position += 1
        let start = position
        // Fast path: no escapes, so the bytes are the string.
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let value = try makeString(UnsafeBufferPointer(rebasing: bytes[start..<position]), at: start)
                position += 1
                return value
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20, !acceptsControlCharacters { throw malformed("control character in a string") }
            position += 1
        }
        guard position < bytes.count else { throw truncated }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return try scratch.withUnsafeBufferPointer { buffer throws(NewsMappingError) in
                    try makeString(buffer, at: start)
                }
            case UInt8(ascii: "\\"):
                try parseEscape()
            case 0..<0x20 where !acceptsControlCharacters:
                throw malformed("control character in a string")
            default:
                scratch.append(byte)
                position += 1
            }
        }
        throw truncated
    }

    func makeString(_ buffer: UnsafeBufferPointer<UInt8>, at offset: Int) throws(NewsMappingError) -> String {
        // The codec's validator: sixteen bytes a step where `String(validating:)` walks mixed
        // text a byte at a time (a seventh of a JSON Lines load went to it).
        guard let start = buffer.baseAddress else { return "" }
        guard let string = UTF8Validation.string(start, count: buffer.count) else {
            throw malformed("invalid UTF-8 in a string", at: offset)
        }
        return string
    }

    /// Decodes one escape sequence (at the backslash) into `scratch`.
    mutating func parseEscape() throws(NewsMappingError) {
        let escapeStart = position
        position += 1
        guard position < bytes.count else { throw truncated }
        let byte = bytes[position]
        position += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(byte)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try hex4())
            if (0xD800...0xDBFF).contains(scalar) {
                guard position + 1 < bytes.count else { throw truncated }
                guard bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                    throw malformed("unpaired surrogate", at: escapeStart)
                }
                position += 2
                let low = UInt32(try hex4())
                guard (0xDC00...0xDFFF).contains(low) else { throw malformed("unpaired surrogate", at: escapeStart) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw malformed("unpaired surrogate", at: escapeStart)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw malformed("invalid escape", at: escapeStart) }
            scratch.append(contentsOf: UTF8.encode(unicode)!)
        default:
            throw malformed("invalid escape", at: escapeStart)
        }
    }

    mutating func hex4() throws(NewsMappingError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard position < bytes.count else { throw truncated }
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw malformed("invalid \\u escape")
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }
}
