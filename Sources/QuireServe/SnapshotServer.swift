/// Serves one resource, `GET /snapshot`: bytes a provider produces per request (a cluster
/// member's consistent copy of its store, for a peer that fell behind the log's compaction).
///
/// It runs on the same libmicrohttpd layer as ``ArticleServer``. There is no authentication:
/// listen on the loopback address or a private network only.
public final class SnapshotServer: Sendable {
    private let daemon: HTTPDaemon
    /// The address listened on.
    public let address: SocketAddress
    /// The TCP port listened on.
    public var port: Int { daemon.port }

    /// Starts serving.
    ///
    /// - Parameters:
    ///   - provider: Produces the body of each request, or nil (then the answer is 503); runs on
    ///     a connection thread, so it may block.
    /// - Throws: ``ServeError`` when the address cannot be listened on.
    public init(
        address: SocketAddress = .loopback, port: Int = 0, provider: @escaping @Sendable () -> [UInt8]?
    ) throws(ServeError) {
        self.address = address
        var limits = HTTPDaemon.Limits()
        limits.maxConnections = 16
        limits.threads = 1
        // As the article server: on a loopback address, only a loopback Host is answered (a web
        // page whose name an attacker points at 127.0.0.1 must not fetch the whole store).
        let loopbackOnly = address.isLoopback
        daemon = try HTTPDaemon(address: address, port: port, limits: limits) { request in
            if loopbackOnly, let host = request.host, !(Router.hostName(host).map(Router.isLoopback) ?? false) {
                return HTTPResponse(
                    status: 421, headers: [("Content-Type", "text/plain")],
                    body: Array("this server answers requests for localhost, 127.0.0.1 or [::1] only\n".utf8))
            }
            guard request.method == "GET", request.rawPath == "/snapshot" else {
                return HTTPResponse(
                    status: 404, headers: [("Content-Type", "text/plain")], body: Array("not found\n".utf8))
            }
            guard let bytes = provider() else {
                return HTTPResponse(
                    status: 503, headers: [("Content-Type", "text/plain")], body: Array("no snapshot available\n".utf8))
            }
            return HTTPResponse(status: 200, headers: [("Content-Type", "application/octet-stream")], body: bytes)
        }
    }

    /// `http://host:port/snapshot`.
    public var url: String { "http://\(address.display(port: port))/snapshot" }

    /// Stops listening and waits for the connection threads. Idempotent.
    public func stop() { daemon.stop() }
}
