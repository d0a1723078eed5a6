public import Foundation

/// A reusable conversion of one JSON value into a Swift value, like Mantle's value transformers.
///
/// The closure is called only for a value that is present and not `null`. It returns `nil` to say
/// "treat as absent" (the APIs write absence as `""` or `[]` in some eras) and throws a
/// ``NewsMappingError`` whose path is relative to the value; the mapper prefixes the location.
public struct ValueTransformer<Output>: Sendable {
    /// The conversion.
    public let transform: @Sendable (JSONValue) throws(NewsMappingError) -> Output?

    /// Creates a transformer from a closure.
    public init(_ transform: @escaping @Sendable (JSONValue) throws(NewsMappingError) -> Output?) {
        self.transform = transform
    }

    /// A transformer that applies `next` to this one's output (`nil` stays `nil`).
    public func map<Next>(_ next: @escaping @Sendable (Output) throws(NewsMappingError) -> Next?) -> ValueTransformer<Next> {
        let first = transform
        return ValueTransformer<Next> { value throws(NewsMappingError) in
            guard let output = try first(value) else { return nil }
            return try next(output)
        }
    }
}

extension NewsMappingError {
    static func mismatch(_ expected: String, _ value: JSONValue) -> NewsMappingError {
        NewsMappingError(.typeMismatch(expected: expected, found: value.typeName))
    }
}

extension ValueTransformer where Output == String {
    /// A JSON string, byte-exact; `""` is absent.
    public static var string: ValueTransformer<String> {
        ValueTransformer { value throws(NewsMappingError) in
            guard case .string(let text) = value else { throw .mismatch("string", value) }
            return text.isEmpty ? nil : text
        }
    }

    /// A JSON string that names something, byte-exact; one of white space only (`"   "`) is
    /// absent, as `""` is: an id or URL of spaces names no article (it was stored as one).
    public static var identifier: ValueTransformer<String> {
        ValueTransformer { value throws(NewsMappingError) in
            guard case .string(let text) = value else { throw .mismatch("string", value) }
            return NewsText.isBlank(text) ? nil : text
        }
    }

    /// A JSON string, or a number written as its decimal text (`print_page` is either); `""` is absent.
    public static var lenientString: ValueTransformer<String> {
        ValueTransformer { value throws(NewsMappingError) in
            switch value {
            case .string(let text): return text.isEmpty ? nil : text
            case .int(let number): return String(number)
            case .double(let number): return number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
            default: throw .mismatch("string or number", value)
            }
        }
    }

    /// An image address made absolute: relative paths (`images/2012/…`) get `base` in front.
    public static func absoluteURL(base: String = "https://static01.nyt.com/") -> ValueTransformer<String> {
        ValueTransformer.string.map { text throws(NewsMappingError) in
            if text.contains("://") || text.hasPrefix("//") { return text.hasPrefix("//") ? "https:" + text : text }
            if text.hasPrefix("/") { return String(base.dropLast(base.hasSuffix("/") ? 1 : 0)) + text }
            return base + text
        }
    }
}

extension ValueTransformer where Output == Int {
    /// An integer. With `lenient`, a string of decimal digits is accepted too (`"282"`, `" 12 "` is not);
    /// an integral floating-point number is always accepted. `""` is absent.
    public static func int(lenient: Bool = false) -> ValueTransformer<Int> {
        ValueTransformer { value throws(NewsMappingError) in
            switch value {
            case .int(let number):
                return number
            case .double(let number):
                guard number == number.rounded(), let exact = Int(exactly: number) else {
                    // A whole number too large for 64 bits (which the parser read as a double) is
                    // said as such, not as "1e+20 is not an integer".
                    let why = number == number.rounded() && number.isFinite ? "is too large for a whole number" : "is not an integer"
                    throw NewsMappingError(.invalidValue("\(number) \(why)"))
                }
                return exact
            case .string(let text) where lenient:
                if text.isEmpty { return nil }
                guard let number = Int(text) else {
                    // Digits alone, after an optional sign: a whole number, too large for 64 bits.
                    let digits = text.hasPrefix("-") ? text.dropFirst() : text[...]
                    let tooLarge = !digits.isEmpty && digits.utf8.allSatisfy { (0x30...0x39).contains($0) }
                    throw NewsMappingError(.invalidValue("\"\(text)\" \(tooLarge ? "is too large for a whole number" : "is not an integer")"))
                }
                return number
            default:
                throw .mismatch(lenient ? "integer or numeric string" : "integer", value)
            }
        }
    }
}

extension ValueTransformer where Output == Bool {
    /// A JSON boolean, or (lenient eras) `"Y"`/`"N"`, `"true"`/`"false"`.
    public static var bool: ValueTransformer<Bool> {
        ValueTransformer { value throws(NewsMappingError) in
            switch value {
            case .bool(let flag): return flag
            case .string("Y"), .string("true"): return true
            case .string("N"), .string("false"): return false
            case .string(""): return nil
            default: throw .mismatch("boolean", value)
            }
        }
    }
}

extension ValueTransformer where Output == Date {
    /// A timestamp in any form ``NewsDate`` accepts; `""` is absent, anything else unparseable is
    /// an ``NewsMappingError/Kind/invalidDate(_:)``.
    public static var date: ValueTransformer<Date> {
        ValueTransformer { value throws(NewsMappingError) in
            guard case .string(let text) = value else { throw .mismatch("date string", value) }
            if text.isEmpty { return nil }
            guard let date = NewsDate.parse(text) else { throw NewsMappingError(.invalidDate(text)) }
            return date
        }
    }
}

extension ValueTransformer {
    /// A nested object mapped by `mapping`. An empty array (`[]`, how some eras write "no object")
    /// is absent.
    public static func object(_ mapping: JSONMapping<Output>) -> ValueTransformer<Output> {
        ValueTransformer { value throws(NewsMappingError) in
            switch value {
            case .object(let object): return try mapping.map(object)
            case .array(let elements) where elements.isEmpty: return nil
            default: throw .mismatch("object", value)
            }
        }
    }

    /// An array whose elements are converted by `element`, with the element's index in error paths.
    /// Elements that convert to `nil` are left out; an empty result is absent.
    public static func array<Element>(of element: ValueTransformer<Element>) -> ValueTransformer<Output>
    where Output == [Element] {
        ValueTransformer { value throws(NewsMappingError) in
            guard case .array(let elements) = value else { throw .mismatch("array", value) }
            var result: [Element] = []
            result.reserveCapacity(elements.count)
            for (index, item) in elements.enumerated() where item != .null {
                do throws(NewsMappingError) {
                    if let converted = try element.transform(item) { result.append(converted) }
                } catch {
                    throw error.prefixed(by: [.index(index)])
                }
            }
            return result.isEmpty ? nil : result
        }
    }

    /// An array of objects, each mapped by `mapping`.
    public static func array<Element>(of mapping: JSONMapping<Element>) -> ValueTransformer<Output>
    where Output == [Element] {
        array(of: ValueTransformer<Element>.object(mapping))
    }
}
