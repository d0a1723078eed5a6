public import Foundation

/// Where a property's value comes from and how it is converted: one or more key paths (the first
/// present one wins) and a ``ValueTransformer``.
///
/// Rules are written with leading-dot factories inside a ``JSONMapping``:
/// `try m(.string("headline.main"))`, `try m(.int("word_count", lenient: true))`,
/// `try m(.firstOf("uri", "_id"))`. A missing key, `null`, or a value the transformer calls absent
/// (such as `""`) yields `nil` for an optional rule and ``NewsMappingError/Kind/missingField`` for a
/// required one.
public struct MappingRule<Value>: Sendable {
    /// Produces the value from the object being mapped.
    let resolve: @Sendable (JSONMapper) throws(NewsMappingError) -> Value

    /// Creates a rule from a closure over the mapper (for rules the factories don't cover).
    public init(_ resolve: @escaping @Sendable (JSONMapper) throws(NewsMappingError) -> Value) {
        self.resolve = resolve
    }

    /// An optional value at the first present path, converted by `transformer`.
    public static func optional<T>(_ paths: [JSONKeyPath], _ transformer: ValueTransformer<T>) -> MappingRule<T?>
    where Value == T? {
        MappingRule { mapper throws(NewsMappingError) in try mapper.value(at: paths, transformer) }
    }

    /// A required value at the first present path, converted by `transformer`; absence is a
    /// ``NewsMappingError/Kind/missingField`` error at the last path (with several paths a
    /// ``NewsMappingError/Kind/missingAll(_:)`` error, which names the others too).
    public static func required(_ paths: [JSONKeyPath], _ transformer: ValueTransformer<Value>) -> MappingRule<Value> {
        MappingRule { mapper throws(NewsMappingError) in
            guard let value = try mapper.value(at: paths, transformer) else {
                let location = paths.last?.components ?? []
                guard paths.count > 1 else { throw NewsMappingError(.missingField, at: location) }
                throw NewsMappingError(.missingAll(paths.map(\.description)), at: location)
            }
            return value
        }
    }
}

extension MappingRule where Value == String? {
    /// A string at `path` (`""` is absent). With `lenient`, a number is accepted as its decimal text.
    public static func string(_ path: JSONKeyPath, lenient: Bool = false) -> MappingRule<String?> {
        optional([path], lenient ? .lenientString : .string)
    }

    /// An image address at `path`, made absolute against `base`.
    public static func absoluteURL(_ path: JSONKeyPath, base: String = "https://static01.nyt.com/") -> MappingRule<String?> {
        optional([path], .absoluteURL(base: base))
    }
}

extension MappingRule where Value == String {
    /// A required, non-empty string at `path`.
    public static func requiredString(_ path: JSONKeyPath) -> MappingRule<String> {
        required([path], .string)
    }

    /// The first present, non-empty string among `paths` (`.firstOf("uri", "_id")`); required.
    public static func firstOf(_ paths: JSONKeyPath...) -> MappingRule<String> {
        required(paths, .string)
    }
}

extension MappingRule where Value == Int? {
    /// An integer at `path`; with `lenient`, a numeric string (`"282"`) too.
    public static func int(_ path: JSONKeyPath, lenient: Bool = false) -> MappingRule<Int?> {
        optional([path], .int(lenient: lenient))
    }
}

extension MappingRule where Value == Bool? {
    /// A boolean at `path` (also `"Y"`/`"N"`).
    public static func bool(_ path: JSONKeyPath) -> MappingRule<Bool?> {
        optional([path], .bool)
    }
}

extension MappingRule {
    /// A timestamp at `path`; present but unparseable is an error.
    public static func date(_ path: JSONKeyPath) -> MappingRule<Value> where Value == Date? {
        optional([path], .date)
    }

    /// A nested object at `path`, mapped by `mapping` (`[]` counts as absent).
    public static func object<T>(_ path: JSONKeyPath, _ mapping: JSONMapping<T>) -> MappingRule<T?> where Value == T? {
        optional([path], .object(mapping))
    }

    /// An array of objects at `path`, each mapped by `mapping`; an empty array is absent.
    public static func array<T>(_ path: JSONKeyPath, of mapping: JSONMapping<T>) -> MappingRule<[T]?>
    where Value == [T]? {
        optional([path], .array(of: mapping))
    }

    /// An array of values at `path`, each converted by `element`; an empty array is absent.
    public static func array<T>(_ path: JSONKeyPath, of element: ValueTransformer<T>) -> MappingRule<[T]?>
    where Value == [T]? {
        optional([path], .array(of: element))
    }
}
