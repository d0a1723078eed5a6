/// A parsed JSON value.
///
/// Produced by ``JSONParser``. Strings keep the exact characters of the input (escapes decoded,
/// nothing else changed); integers that fit in `Int` stay integers so that ids and counts are exact.
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number without fraction or exponent that fits in `Int`.
    case int(Int)
    /// Any other number.
    case double(Double)
    /// A string, with its escapes decoded.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object(JSONObject)

    /// A short name of the value's type, used in error messages ("string", "object", ...).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// Whether the value carries nothing: `null`, `""`, `[]` or `{}`.
    ///
    /// The news APIs write an absent value in all of these ways depending on the era.
    public var isEmptyOrNull: Bool {
        switch self {
        case .null: true
        case .string(let s): s.isEmpty
        case .array(let a): a.isEmpty
        case .object(let o): o.isEmpty
        default: false
        }
    }
}

/// A JSON object: its members by key, and the byte range it occupied in the parsed input.
///
/// When a key repeats, the last occurrence wins (as in most parsers).
public struct JSONObject: Sendable, Hashable {
    /// The members by key.
    public var members: [String: JSONValue]
    /// The range of input bytes from `{` to `}` inclusive; lets a caller keep a document's exact bytes.
    public var byteRange: Range<Int>

    /// Creates an object from its members.
    public init(members: [String: JSONValue], byteRange: Range<Int> = 0..<0) {
        self.members = members
        self.byteRange = byteRange
    }

    /// The member named `key`, if present.
    @inlinable public subscript(key: String) -> JSONValue? { members[key] }

    /// Whether the object has no members.
    public var isEmpty: Bool { members.isEmpty }
}
