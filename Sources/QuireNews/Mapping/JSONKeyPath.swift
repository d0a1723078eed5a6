/// A dotted path of object keys, like `"headline.main"` or `"response.docs"`.
///
/// Written as a string literal in mappings. Keys that themselves contain a dot can be given with
/// ``init(keys:)``.
public struct JSONKeyPath: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The keys, outermost first.
    public let keys: [String]

    /// A path from its keys.
    public init(keys: [String]) { self.keys = keys }

    /// A path from dotted text: `"byline.original"`.
    public init(_ dotted: String) {
        keys = dotted.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    public init(stringLiteral value: String) { self.init(value) }

    /// The keys as path components (for error locations).
    public var components: [JSONPathComponent] { keys.map { .key($0) } }

    public var description: String { keys.joined(separator: ".") }
}
