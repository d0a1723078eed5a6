#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A numeric IPv4 or IPv6 address to listen on (`localhost` is read as `127.0.0.1`).
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    private enum Storage: Hashable {
        case v4(UInt32)  // network byte order
        case v6([UInt8])
    }
    private let storage: Storage

    /// The address as given (normalized for `localhost`).
    public let description: String

    /// Parses `host`; nil when it is not a numeric IPv4 or IPv6 address nor `localhost`.
    public init?(_ host: String) {
        let name = host == "localhost" ? "127.0.0.1" : host
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 {
            storage = .v4(v4.s_addr)
            description = name
            return
        }
        let bare = name.hasPrefix("[") && name.hasSuffix("]") ? String(name.dropFirst().dropLast()) : name
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, bare, &v6) == 1 else { return nil }
        storage = .v6(withUnsafeBytes(of: v6) { Array($0) })
        description = bare
    }

    /// `127.0.0.1`, the default: only programs on this machine can connect.
    public static let loopback = SocketAddress("127.0.0.1")!

    /// True for 127.0.0.0/8 and `::1`, the addresses only this machine reaches.
    public var isLoopback: Bool {
        switch storage {
        case .v4(let address): return UInt32(bigEndian: address) >> 24 == 127
        case .v6(let bytes): return bytes == Array(repeating: 0, count: 15) + [1]
        }
    }

    /// True for `0.0.0.0` and `::`: every address of this machine to listen on, but none that
    /// another machine can connect to.
    public var isUnspecified: Bool {
        switch storage {
        case .v4(let address): return address == 0
        case .v6(let bytes): return bytes.allSatisfy { $0 == 0 }
        }
    }

    var isIPv6: Bool {
        if case .v6 = storage { return true }
        return false
    }

    /// `host:port`, with brackets around an IPv6 address.
    func display(port: Int) -> String { isIPv6 ? "[\(description)]:\(port)" : "\(description):\(port)" }

    /// Calls `body` with a `sockaddr` for this address and `port`.
    func withSocketAddress<R>(port: Int, _ body: (UnsafePointer<sockaddr>) -> R) -> R {
        switch storage {
        case .v4(let address):
            var sa = sockaddr_in()
            sa.sin_family = sa_family_t(AF_INET)
            sa.sin_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
            sa.sin_addr.s_addr = address
            return withUnsafePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
        case .v6(let bytes):
            var sa = sockaddr_in6()
            sa.sin6_family = sa_family_t(AF_INET6)
            sa.sin6_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
            withUnsafeMutableBytes(of: &sa.sin6_addr) { $0.copyBytes(from: bytes) }
            return withUnsafePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
        }
    }
}
