/// A declarative mapping from a JSON object to a model, in the manner of Mantle.
///
/// A mapping states which key path feeds which property, through reusable ``MappingRule``s and
/// ``ValueTransformer``s; there is no reflection. Errors carry the JSON path of the value that
/// failed, relative to the mapped object, and grow their prefix as they travel outwards.
///
/// Mapping your own API and model:
///
/// ```swift
/// struct Podcast: Sendable, Equatable {
///     var id: String
///     var title: String?
///     var episodes: Int?
///     var published: Date?
///     var hosts: [String]?
/// }
///
/// let podcastMapping = JSONMapping<Podcast> { m throws(NewsMappingError) in
///     Podcast(
///         id: try m(.firstOf("guid", "id")),
///         title: try m(.string("meta.title")),
///         episodes: try m(.int("stats.episode_count", lenient: true)),
///         published: try m(.date("meta.first_aired")),
///         hosts: try m(.array("hosts", of: .string)))
/// }
///
/// let podcast = try podcastMapping.decode(bytes)   // or .map(object) inside another mapping
/// ```
///
/// A body returning `nil` means "skip this object" when the mapping is used for array elements
/// (an image without an address, say).
public struct JSONMapping<Model>: Sendable {
    /// Builds the model from a mapper over one object.
    let body: @Sendable (JSONMapper) throws(NewsMappingError) -> Model?

    /// Creates a mapping.
    public init(_ body: @escaping @Sendable (JSONMapper) throws(NewsMappingError) -> Model?) {
        self.body = body
    }

    /// Maps one object; `nil` if the mapping skips it.
    public func map(_ object: JSONObject) throws(NewsMappingError) -> Model? {
        try body(JSONMapper(object: object))
    }

    /// Maps a value that must be an object.
    public func map(_ value: JSONValue) throws(NewsMappingError) -> Model? {
        guard case .object(let object) = value else { throw .mismatch("object", value) }
        return try map(object)
    }

    /// Parses `bytes` as JSON and maps the root object. Raw control characters in strings are
    /// taken as they are, as in a page (a document kept from one maps again the same way).
    ///
    /// - Throws: a parse error, a mapping error with its path, or ``NewsMappingError/Kind/missingField``
    ///   at the root if the mapping skipped the object.
    public func decode(_ bytes: [UInt8]) throws(NewsMappingError) -> Model {
        guard let model = try map(JSONParser.parse(bytes, acceptsControlCharacters: true)) else {
            throw NewsMappingError(.missingField)
        }
        return model
    }
}

/// The view of one JSON object a ``JSONMapping`` reads from. Apply rules by calling it: `try m(rule)`.
public struct JSONMapper: Sendable {
    /// The object being mapped.
    public let object: JSONObject

    /// Creates a mapper over an object.
    public init(object: JSONObject) { self.object = object }

    /// Applies a rule.
    public func callAsFunction<Value>(_ rule: MappingRule<Value>) throws(NewsMappingError) -> Value {
        try rule.resolve(self)
    }

    /// The raw value at `path`; `nil` if it or an enclosing object is missing, `null`, `[]` or `{}`.
    ///
    /// - Throws: ``NewsMappingError/Kind/typeMismatch(expected:found:)`` when an enclosing value is a
    ///   string, number or non-empty array where an object is needed.
    public func raw(_ path: JSONKeyPath) throws(NewsMappingError) -> JSONValue? {
        var current = object
        let keys = path.keys
        for (depth, key) in keys.enumerated() {
            guard let next = current[key] else { return nil }
            if depth == keys.count - 1 { return next == .null ? nil : next }
            switch next {
            case .object(let child):
                current = child
            case .null:
                return nil
            case .array(let elements) where elements.isEmpty:
                return nil
            default:
                throw NewsMappingError.mismatch("object", next).prefixed(by: keys[...depth].map { .key($0) })
            }
        }
        return .object(current)
    }

    /// The first present value among `paths`, converted by `transformer`, or `nil`.
    public func value<T>(at paths: [JSONKeyPath], _ transformer: ValueTransformer<T>) throws(NewsMappingError) -> T? {
        for path in paths {
            guard let raw = try raw(path) else { continue }
            do throws(NewsMappingError) {
                if let value = try transformer.transform(raw) { return value }
            } catch {
                throw error.prefixed(by: path.components)
            }
        }
        return nil
    }
}
