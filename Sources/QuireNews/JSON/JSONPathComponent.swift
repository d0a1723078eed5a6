/// One step of a path into a JSON document: an object key or an array index.
public enum JSONPathComponent: Sendable, Hashable {
    /// An object member.
    case key(String)
    /// An array element.
    case index(Int)
}

extension [JSONPathComponent] {
    /// The path written the way a reader expects it: `response.docs[3].pub_date`.
    ///
    /// The root itself is the empty string.
    var rendered: String {
        var out = ""
        for component in self {
            switch component {
            case .key(let key):
                if !out.isEmpty { out += "." }
                out += key
            case .index(let index):
                out += "[\(index)]"
            }
        }
        return out
    }
}
