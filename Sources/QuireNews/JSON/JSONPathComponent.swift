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
    /// The root itself is the empty string. A path deeper than a reader can take in (hostile input
    /// nests hundreds of levels) keeps its first and last steps around `…`, and a long key its
    /// first characters, so that an error message stays a line.
    var rendered: String {
        let shown = count > Self.renderedSteps
            ? Array(prefix(Self.renderedSteps - 4)) + [.key("…")] + Array(suffix(3))
            : self
        var out = ""
        for component in shown {
            switch component {
            case .key(let key):
                if !out.isEmpty, !out.hasSuffix("…"), key != "…" { out += "." }
                out += key.count > Self.renderedKeyLength ? key.prefix(Self.renderedKeyLength - 1) + "…" : key
            case .index(let index):
                out += "[\(index)]"
            }
        }
        return out
    }

    /// The most steps ``rendered`` writes out in full.
    private static var renderedSteps: Int { 16 }
    /// The most characters of a key ``rendered`` writes out.
    private static var renderedKeyLength: Int { 64 }
}
