import Foundation

/// Whether a URL names a server on this machine: `localhost`, 127.0.0.0/8 or `::1`.
enum LoopbackURL {
    static func isLoopback(_ url: String) -> Bool {
        guard var host = URLComponents(string: url)?.host?.lowercased() else { return false }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" || host.hasSuffix(".localhost") { return true }
        if host.hasPrefix("::ffff:") { host = String(host.dropFirst(7)) }
        var address = in6_addr()
        if inet_pton(AF_INET6, host, &address) == 1 {
            return withUnsafeBytes(of: &address) { bytes in bytes.dropLast().allSatisfy { $0 == 0 } && bytes.last == 1 }
        }
        var ipv4 = in_addr()
        guard inet_pton(AF_INET, host, &ipv4) == 1 else { return false }
        return UInt32(bigEndian: ipv4.s_addr) >> 24 == 127
    }
}
