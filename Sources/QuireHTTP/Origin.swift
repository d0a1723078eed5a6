import Foundation

/// The origin of an http or https URL: scheme, host and port (RFC 6454), what a redirect must
/// keep for the client to follow it without being told to.
struct Origin: Hashable, CustomStringConvertible {
    let scheme: String
    let host: String
    let port: Int

    /// The origin of `url`, or nil when it is not an absolute http or https URL.
    init?(_ url: String) {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        var authority = url[schemeEnd.upperBound...].prefix { !"/?#".contains($0) }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        // The port follows the last colon, outside an IPv6 literal's brackets.
        var host = authority
        var port = scheme == "https" ? 443 : 80
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            host = authority[..<colon]
            let digits = authority[authority.index(after: colon)...]
            if !digits.isEmpty {
                guard let number = Int(digits), (0...65_535).contains(number) else { return nil }
                port = number
            }
        }
        guard !host.isEmpty else { return nil }
        (self.scheme, self.host, self.port) = (scheme, host.lowercased(), port)
    }

    /// Whether this is `other` moved from http to https on the same host (the default ports).
    func isUpgrade(of other: Origin) -> Bool {
        other.scheme == "http" && other.port == 80 && scheme == "https" && port == 443 && host == other.host
    }

    var description: String { "\(scheme)://\(host):\(port)" }
}
