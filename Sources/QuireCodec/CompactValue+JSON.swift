import Foundation

extension CompactValue {
    /// Deterministic compact JSON.
    ///
    /// Keys stay in stored order; dates are ISO 8601 UTC with `Z` (fractional seconds only when not
    /// zero); bytes are base64; URLs are strings; non-ASCII stays UTF-8 and only what JSON requires is
    /// escaped; doubles use the shortest round-trip form; NaN and infinities become `null`.
    public func jsonString() -> String { String(decoding: jsonBytes(), as: UTF8.self) }

    /// ``jsonString()`` as UTF-8 bytes.
    public func jsonBytes() -> [UInt8] {
        var sink = ByteSink(capacity: 1024)  // most records fit: no regrowth while writing
        write(into: &sink)
        return Array(sink.bytes)
    }

    /// Appends ``jsonBytes()`` to `sink`.
    func write(into sink: inout ByteSink) {
        switch self {
        case .null: sink.appendLiteral("null")
        case .bool(let value): sink.appendLiteral(value ? "true" : "false")
        case .int(let value): sink.appendDecimal(value)
        case .uint(let value): sink.appendDecimal(magnitude: value, negative: false)
        case .double(let value):
            if value.isFinite {
                var text = value.description
                text.withUTF8 { sink.append($0) }
            } else {
                sink.appendLiteral("null")
            }
        case .string(let value), .url(let value): sink.appendJSONString(value)
        case .bytes(let value): sink.appendJSONString(Data(value).base64EncodedString())
        case .date(let value):
            sink.append(UInt8(ascii: "\""))
            appendISO8601(value, to: &sink)
            sink.append(UInt8(ascii: "\""))
        case .array(let items):
            sink.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { sink.append(UInt8(ascii: ",")) }
                item.write(into: &sink)
            }
            sink.append(UInt8(ascii: "]"))
        case .object(let fields):
            sink.append(UInt8(ascii: "{"))
            for (index, field) in fields.enumerated() {
                if index > 0 { sink.append(UInt8(ascii: ",")) }
                sink.appendJSONString(field.key)
                sink.append(UInt8(ascii: ":"))
                field.value.write(into: &sink)
            }
            sink.append(UInt8(ascii: "}"))
        }
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction]Z` in UTC, computed directly (no formatter, no locale).
///
/// The fraction has the fewest digits (at most 9) that read back as exactly this `Date`, when
/// read as whole seconds since 2001 plus digits ÷ 10ⁿ (as `NewsDate.parse` and `quire load` do):
/// a Date holds about 100 ns for today's dates, so text with 7 fraction digits or fewer comes
/// back as written, and dump → load → dump changes nothing.
func iso8601(_ date: Date) -> String {
    var sink = ByteSink(capacity: 32)
    appendISO8601(date, to: &sink)
    return String(decoding: sink.bytes, as: UTF8.self)
}

/// ``iso8601(_:)``'s text appended to `out` as bytes, without making strings (a dump writes one per record).
func appendISO8601(_ date: Date, to out: inout ByteSink) {
    let sinceReference = date.timeIntervalSinceReferenceDate
    guard sinceReference.isFinite, sinceReference.magnitude < 1e14 else {
        var text = String(date.timeIntervalSince1970)
        text.withUTF8 { out.append($0) }
        return
    }
    var whole = sinceReference.rounded(.down)
    let fraction = sinceReference - whole  // exact, but within a second before 2001 (the check below holds)
    var nanos: Int64 = 0
    var digits = 0
    if fraction != 0 {
        var scale = 1.0
        for count in 1...9 {
            scale *= 10
            let scaled = (fraction * scale).rounded()
            if scaled < scale, whole + scaled / scale == sinceReference {
                nanos = Int64(scaled)
                digits = count
                break
            }
        }
        if digits == 0 {
            // No 9-digit fraction reads back exactly (only for dates far from 2001): round.
            nanos = Int64((fraction * 1e9).rounded())
            digits = 9
            if nanos >= 1_000_000_000 {
                nanos -= 1_000_000_000
                whole += 1
                digits = 0
            }
        }
    }
    let total = Int64(whole) + 978_307_200
    let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
    let secondOfDay = total - days * 86_400
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)

    /// `value` in decimal, zero-padded to `width` digits, a sign first when negative.
    func pad(_ value: Int64, _ width: Int) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var count = 0
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in  // Int64 has at most 19 digits
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for _ in count..<max(count, width) { out.append(UInt8(ascii: "0")) }
            for i in stride(from: count - 1, through: 0, by: -1) { out.append(buffer[i]) }
        }
    }
    pad(year, 4)
    out.append(UInt8(ascii: "-"))
    pad(month, 2)
    out.append(UInt8(ascii: "-"))
    pad(day, 2)
    out.append(UInt8(ascii: "T"))
    pad(secondOfDay / 3600, 2)
    out.append(UInt8(ascii: ":"))
    pad(secondOfDay / 60 % 60, 2)
    out.append(UInt8(ascii: ":"))
    pad(secondOfDay % 60, 2)
    if nanos != 0 && digits > 0 {
        // The fraction's `digits` digits without their trailing zeros.
        var fraction = nanos
        var kept = digits
        while kept > 0, fraction % 10 == 0 {
            fraction /= 10
            kept -= 1
        }
        out.append(UInt8(ascii: "."))
        pad(fraction, kept)
    }
    out.append(UInt8(ascii: "Z"))
}

extension CompactValue {
    /// Errors from ``init(jsonObject:)``.
    public struct JSONConversionError: Error, Sendable, CustomStringConvertible {
        /// Where the unsupported value is, like `docs[0].headline`.
        public let path: String
        /// The Swift type that was found.
        public let typeName: String
        public var description: String { "cannot convert \(typeName) at \(path.isEmpty ? "<root>" : path) to a compact value" }
    }

    /// Builds a value from parsed JSON (the output of `JSONSerialization.jsonObject`).
    ///
    /// Object keys are sorted by UTF-8 bytes, because `JSONSerialization` does not keep their order.
    /// Integers become ``int(_:)`` (or ``uint(_:)`` above `Int64.max`), other numbers ``double(_:)``.
    /// - Throws: ``JSONConversionError`` for values that JSON cannot produce.
    public init(jsonObject: Any) throws {
        self = try CompactValue.convert(jsonObject, path: "")
    }

    private static func convert(_ object: Any, path: String) throws -> CompactValue {
        switch object {
        case is NSNull: return .null
        case let string as String: return .string(string)
        case let number as NSNumber: return convert(number)
        case let array as [Any]:
            var items: [CompactValue] = []
            items.reserveCapacity(array.count)
            for (index, item) in array.enumerated() { items.append(try convert(item, path: "\(path)[\(index)]")) }
            return .array(items)
        case let dictionary as [String: Any]:
            let keys = dictionary.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            return .object(
                try keys.map { key in
                    Field(key: key, value: try convert(dictionary[key]!, path: path.isEmpty ? key : "\(path).\(key)"))
                })
        default:
            throw JSONConversionError(path: path, typeName: String(describing: type(of: object)))
        }
    }

    private static func convert(_ number: NSNumber) -> CompactValue {
        // JSONSerialization gives booleans as NSNumber too; their type encoding is "c" (or a CFBoolean).
        if type(of: number) != NSNumber.self || String(cString: number.objCType) == "c" {
            if number === (true as NSNumber) { return .bool(true) }
            if number === (false as NSNumber) { return .bool(false) }
        }
        let objCType = String(cString: number.objCType)
        switch objCType {
        case "c", "C", "B":
            return .bool(number.boolValue)
        case "d", "f":
            let double = number.doubleValue
            if double.rounded() == double, let int = Int64(exactly: double), !"\(number)".contains(".") {
                return .int(int)
            }
            return .double(double)
        case "Q", "L", "I", "S":
            let value = number.uint64Value
            return value <= UInt64(Int64.max) ? .int(Int64(value)) : .uint(value)
        default:
            return .int(number.int64Value)
        }
    }
}
