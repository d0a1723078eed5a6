/// Values that nest deeper than the parser's limit, set aside instead of failing the whole input.
///
/// A page of results holds many documents; one of them nesting too deeply must not stop the
/// others (the fetch would retry the page forever). The reader then checks such a value's syntax
/// without recursion — an explicit stack on the heap, not the call stack — records where it
/// is and yields `null` in its place; the page parser rejects the document that held it.
struct DeepJSONValue {
    /// The byte offset where it starts.
    var offset: Int
    /// Its location, such as `response.docs[3].related[0][0]…`.
    var path: [JSONPathComponent]

    /// The error of a strict parse at this value.
    var error: NewsMappingError { NewsMappingError(.depthLimitExceeded(offset: offset), at: path) }
}

extension JSONByteReader {
    /// Parses an array or object at `position` that would exceed `maxDepth`: validates it
    /// iteratively, records it in `deepValues` and returns `.null`.
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
            case UInt8(ascii: "\""): _ = try parseString()
            case UInt8(ascii: "t"): try parseLiteral("true")
            case UInt8(ascii: "f"): try parseLiteral("false")
            case UInt8(ascii: "n"): try parseLiteral("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try parseNumber()
            default: throw malformed("unexpected character '\(Character(Unicode.Scalar(bytes[position])))'")
            }
            // What follows a value: the next member or element, or the end of containers.
            while true {
                guard let opener = open.last else {
                    deepValues?.append(DeepJSONValue(offset: start, path: path))
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
                    throw malformed(opener == UInt8(ascii: "{") ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array")
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
        _ = try parseString()
        skipWhitespace()
        guard position < bytes.count else { throw truncated }
        guard bytes[position] == UInt8(ascii: ":") else { throw malformed("expected ':' after a member name") }
        position += 1
    }
}
