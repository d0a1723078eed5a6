/// The one-byte tag in front of every value (see docs/FORMAT.md, "Kinds").
@usableFromInline enum ValueKind: UInt8 {
    case null = 0x00
    case falseValue = 0x01
    case trueValue = 0x02
    case int = 0x03  // zigzag varint
    case uint = 0x04  // varint
    case float64 = 0x05  // 8 bytes little-endian
    case float32 = 0x06  // 4 bytes little-endian
    case string = 0x07  // varint length + UTF-8
    case bytes = 0x08  // varint length + bytes
    case dateMillis = 0x09  // zigzag varint milliseconds since 1970-01-01T00:00:00Z
    case dateSeconds = 0x0A  // float64 seconds since 2001-01-01T00:00:00Z
    case url = 0x0B  // varint length + UTF-8
    case array = 0x0C  // varint body length + values
    case object = 0x0D  // varint body length + (varint field id, value) pairs
    case map = 0x0E  // varint body length + (key value, value) pairs
    case dateWholeSeconds = 0x0F  // zigzag varint whole seconds since 1970-01-01T00:00:00Z
    case stringRef = 0x10  // varint index of an earlier numbered string
    case stringPrefixRef = 0x11  // varint index, varint shared prefix length, varint suffix length + suffix
    case internedString = 0x12  // varint id of an interned value in the field table
    case smallInt = 0x40  // 0x40–0x7F: an int whose zigzag form (0…63) is the low 6 bits
    case shortString = 0x80  // 0x80–0xFF: a string whose UTF-8 length (0…127) is the low 7 bits

    /// The kind of a tag byte, folding the small-int and short-string ranges; nil for reserved tags.
    @inline(__always) static func of(_ tag: UInt8) -> ValueKind? {
        if tag >= 0x80 { return .shortString }
        if tag >= 0x40 { return .smallInt }
        // Spelled out so that it inlines as a table lookup: `init(rawValue:)` stays a call.
        switch tag {
        case 0x00: return .null
        case 0x01: return .falseValue
        case 0x02: return .trueValue
        case 0x03: return .int
        case 0x04: return .uint
        case 0x05: return .float64
        case 0x06: return .float32
        case 0x07: return .string
        case 0x08: return .bytes
        case 0x09: return .dateMillis
        case 0x0A: return .dateSeconds
        case 0x0B: return .url
        case 0x0C: return .array
        case 0x0D: return .object
        case 0x0E: return .map
        case 0x0F: return .dateWholeSeconds
        case 0x10: return .stringRef
        case 0x11: return .stringPrefixRef
        case 0x12: return .internedString
        default: return nil
        }
    }

    var name: String {
        switch self {
        case .null: "null"
        case .falseValue, .trueValue: "bool"
        case .int, .smallInt: "int"
        case .uint: "uint"
        case .float64: "float64"
        case .float32: "float32"
        case .string, .shortString, .stringRef, .stringPrefixRef, .internedString: "string"
        case .bytes: "bytes"
        case .dateMillis, .dateSeconds, .dateWholeSeconds: "date"
        case .url: "url"
        case .array: "array"
        case .object: "object"
        case .map: "map"
        }
    }
}

/// The leading version/flags byte.
enum FormatHeader {
    static let version: UInt8 = 1
    /// Version 2: version 1 with a CRC-32C in the four bytes after the header byte.
    static let checkedVersion: UInt8 = 2
    /// Where a version 2 payload continues after its header and checksum.
    static let checkedBodyStart = 5
    static let versionMask: UInt8 = 0x0F
    static let compressed: UInt8 = 0x10
    static let standalone: UInt8 = 0x20
    static let dictionary: UInt8 = 0x40
    static let reserved: UInt8 = 0x80
}

/// Strings shorter than this are never numbered nor referenced: a reference would not be shorter.
let minimumNumberedStringLength = 4
/// A string shares a prefix with an earlier one only when at least this many bytes match.
let minimumSharedPrefixLength = 8

/// Seconds between 1970-01-01 and 2001-01-01 (Foundation's reference date).
let secondsFrom1970To2001: Double = 978_307_200

@inlinable @inline(__always) func zigzag(_ value: Int64) -> UInt64 {
    UInt64(bitPattern: (value << 1) ^ (value >> 63))
}

@inline(__always) func unzigzag(_ value: UInt64) -> Int64 {
    Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
}
