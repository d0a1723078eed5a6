/// Values set aside instead of failing the whole input: arrays and objects that nest deeper
/// than the parser's limit, and strings whose text is not valid (bad UTF-8, an unpaired
/// surrogate, an unknown escape).
///
/// A page of results holds many documents; one of them with such a value must not stop the
/// others (the fetch would retry the page forever). The reader checks a deep value's syntax
/// without recursion — an explicit stack on the heap, not the call stack — and finds a bad
/// string's closing quote, records where the value is and why, and yields `null` in its place;
/// the page parser rejects the document that held it. Damage that hides where a value ends (a
/// missing quote or bracket, a cut body) still fails the page.
struct SetAsideJSONValue {
    /// The byte offset where it starts.
    var offset: Int
    /// Its location, such as `response.docs[3].related[0][0]…`.
    var path: [JSONPathComponent]
    /// Why it was set aside: `.depthLimitExceeded` or `.malformedJSON`.
    var kind: NewsMappingError.Kind

    /// The error of a strict parse at this value.
    var error: NewsMappingError { NewsMappingError(kind, at: path) }
}

extension JSONByteReader {
    /// Parses an array or object at `position` that would exceed `maxDepth`: validates it
    /// iteratively, records it in `setAside` and returns `.null`.
    mutating func setAsideDeepValue() throws(NewsMappingError) -> JSONValue {
        let start = position
        var open: [UInt8] = []
        while true {
            // A value.
            skipWhitespace()
            guard position < bytes.count else { throw truncated }
            switch bytes[position] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let opener = bytes[position]
                position += 1
                skipWhitespace()
                guard position < bytes.count else { throw truncated }
                if bytes[position] == opener &+ 2 {  // `}` and `]` are two after `{` and `[`
                    position += 1
                } else {
                    open.append(opener)
                    if opener == UInt8(ascii: "{") { try skipMemberName() }
                    continue
                }
            case UInt8(ascii: "\""): _ = try parseStringSettingAsideBadText()  // its text is set aside with it
            case UInt8(ascii: "t"): try parseLiteral("true")
            case UInt8(ascii: "f"): try parseLiteral("false")
            case UInt8(ascii: "n"): try parseLiteral("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try parseNumber()
            default: throw malformed("unexpected character '\(Character(Unicode.Scalar(bytes[position])))'")
            }
            // What follows a value: the next member or element, or the end of containers.
            while true {
                guard let opener = open.last else {
                    let kind = NewsMappingError.Kind.depthLimitExceeded(offset: start)
                    setAside?.append(SetAsideJSONValue(offset: start, path: path, kind: kind))
                    return .null
                }
                skipWhitespace()
                guard position < bytes.count else { throw truncated }
                let byte = bytes[position]
                if byte == UInt8(ascii: ",") {
                    position += 1
                    if opener == UInt8(ascii: "{") { try skipMemberName() }
                    break
                }
                guard byte == opener &+ 2 else {
                    let expected = opener == UInt8(ascii: "{") ? "',' or '}' in an object" : "',' or ']' in an array"
                    throw malformed("expected " + expected)
                }
                position += 1
                open.removeLast()
            }
        }
    }

    /// A member name and its colon, inside a set-aside object.
    private mutating func skipMemberName() throws(NewsMappingError) {
        skipWhitespace()
        guard position < bytes.count else { throw truncated }
        guard bytes[position] == UInt8(ascii: "\"") else { throw malformed("expected a member name") }
        _ = try parseStringSettingAsideBadText()
        skipWhitespace()
        guard position < bytes.count else { throw truncated }
        guard bytes[position] == UInt8(ascii: ":") else { throw malformed("expected ':' after a member name") }
        position += 1
    }

    /// Parses the string at `position`; when its text is not valid but its closing quote can be
    /// found, records it in `setAside` and returns `.null` instead of throwing.
    mutating func parseStringSettingAsideBadText() throws(NewsMappingError) -> JSONValue {
        let start = position
        do throws(NewsMappingError) {
            return .string(try parseString())
        } catch {
            guard case .malformedJSON = error.kind else { throw error }
            // Text damage, not structure: the string still ends at the next unescaped quote.
            position = start + 1
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: "\\"): position += 2
                case UInt8(ascii: "\""):
                    position += 1
                    setAside?.append(SetAsideJSONValue(offset: start, path: path, kind: error.kind))
                    return .null
                default: position += 1
                }
            }
            throw truncated
        }
    }
}
