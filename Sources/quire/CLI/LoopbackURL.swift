import Foundation

/// Whether a URL names a server on this machine: `localhost`, 127.0.0.0/8, `::1`, or the
/// unspecified address (`0.0.0.0`, `::`), which a Linux client's connect sends to this machine.
enum LoopbackURL {
    static func isLoopback(_ url: String) -> Bool {
        guard var host = URLComponents(string: url)?.host?.lowercased() else { return false }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }  // `localhost.`, the fully qualified form
        if host == "localhost" || host.hasSuffix(".localhost") { return true }
        if let zone = host.firstIndex(of: "%") { host = String(host[..<zone]) }  // `::1%lo`
        var address = in6_addr()
        if inet_pton(AF_INET6, host, &address) == 1 {
            return withUnsafeBytes(of: &address) { bytes in
                // `::1`, or an IPv4 loopback mapped into IPv6 (`::ffff:127.0.0.1`, `::ffff:7f00:1`).
                let mapped = bytes.prefix(10).allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff
                return (bytes.dropLast().allSatisfy { $0 == 0 } && (bytes.last ?? 0) <= 1) || (mapped && bytes[12] == 127)
            }
        }
        // inet_aton takes every IPv4 form a URL may hold (`127.1`, `0x7f000001`), as curl does.
        var ipv4 = in_addr()
        guard inet_aton(host, &ipv4) != 0 else { return false }
        let value = UInt32(bigEndian: ipv4.s_addr)
        return value >> 24 == 127 || value == 0
    }
}
