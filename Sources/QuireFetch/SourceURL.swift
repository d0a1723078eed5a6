import Foundation

/// A source's URL as part of its identity: never with the `user:password@` a proxy URL may
/// carry, which would otherwise reach errors, checkpoints and the store.
enum SourceURL {
    /// `url` without its user information: `http://a:b@host/x` → `http://host/x`.
    static func withoutCredentials(_ url: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        return String(url[..<scheme.upperBound]) + withoutSchemeAndCredentials(url)
    }

    /// `url` without its scheme and user information: `http://a:b@host/x` → `host/x`.
    static func withoutSchemeAndCredentials(_ url: String) -> Substring {
        var rest = Substring(url)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        if let at = rest[..<authorityEnd].lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        return rest
    }
}
