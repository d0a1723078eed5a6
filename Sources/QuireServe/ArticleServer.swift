import Quire
import Synchronization

/// A read-only HTTP server over an article store: the JSON API of `docs/HTTP.md` under
/// `/api/` and a web page at `/`, served by libmicrohttpd.
///
/// ```swift
/// let server = try ArticleServer(storePath: "news.db")      // 127.0.0.1:8080
/// print(server.url)                                          // http://127.0.0.1:8080/
/// // … later
/// server.stop()
/// ```
///
/// Requests are answered by libmicrohttpd's thread pool (one thread a core), each reading the
/// store synchronously in one snapshot. The server never writes: another process can fetch or
/// load into the same store meanwhile, and `/api/changes` reports its commits.
public final class ArticleServer: Sendable {
    /// Where and how the server listens.
    public struct Configuration: Sendable {
        /// The address to listen on; the loopback address by default.
        public var address: SocketAddress = .loopback
        /// The TCP port; 0 picks a free one (read it back from ``ArticleServer/port``).
        public var port = 8080
        /// Seconds an idle or slow connection is kept before it is closed.
        public var connectionTimeout = 30
        /// Connections served at once.
        public var maxConnections = 512
        /// `/api/changes` streams open at once; more get 503.
        public var maxEventStreams = 64
        /// How often the store is looked at for commits of other processes.
        public var pollInterval: Duration = .milliseconds(250)
        /// Bytes of JSON answers kept and reused until the store's next commit (0 turns the
        /// cache off). Answers are exact either way: an entry is only used while the store's
        /// last committed transaction is the one its snapshot saw.
        public var responseCacheBytes = 32 << 20
        /// Host names (besides IP addresses and `localhost`) that requests may name in `Host`
        /// when the server listens beyond the loopback; requests naming other names get 421, so
        /// a page whose name an attacker points at this server (DNS rebinding) reads nothing.
        public var allowedHostNames: [String] = []

        public init() {}

        /// Why these settings cannot be served with, or nil when they can.
        var problem: String? {
            // The port is the HTTP layer's to check, for every server (`HTTPDaemon`).
            let limit = Int(UInt32.max)
            if !(0...limit).contains(connectionTimeout) {
                return "connectionTimeout \(connectionTimeout) is not a number of seconds (0 to \(limit); 0 keeps idle connections)"
            }
            if !(1...limit).contains(maxConnections) { return "maxConnections \(maxConnections) is not 1 to \(limit)" }
            if pollInterval <= .zero { return "pollInterval \(pollInterval) is not a positive duration" }
            return nil
        }
    }

    private let access: StoreAccess
    private let feed: ChangeFeed
    private let daemon: HTTPDaemon
    /// Raised by ``stop()``: requests not yet started are answered 503 at once, so that the
    /// stop waits for the searches already running only, not for every queued one.
    private let stopping: StopFlag
    /// The address the server listens on.
    public let address: SocketAddress
    /// The TCP port the server listens on.
    public var port: Int { daemon.port }

    /// Serves the store at `storePath`, opened read-only when first needed. The server starts
    /// even when there is no store there yet: requests get 503 until one appears.
    /// - Throws: ``ServeError`` when the address cannot be listened on, or a setting is out of
    ///   its range (a port past 65535, a negative timeout).
    public convenience init(storePath: String, configuration: Configuration = Configuration()) throws(ServeError) {
        try self.init(access: StoreAccess(path: storePath), configuration: configuration)
    }

    /// Serves a store this program has open (it may write to it; `/api/changes` then also
    /// sends each commit's keys). The store stays open after ``stop()``.
    public convenience init(store: Store, configuration: Configuration = Configuration()) throws(ServeError) {
        try self.init(access: StoreAccess(store: store), configuration: configuration)
    }

    private init(access: StoreAccess, configuration: Configuration) throws(ServeError) {
        if let problem = configuration.problem {
            access.close()
            throw ServeError(problem)
        }
        self.access = access
        address = configuration.address
        feed = ChangeFeed(
            access: access, interval: configuration.pollInterval, maxSubscribers: configuration.maxEventStreams)
        let router = Router(
            access: access, feed: feed, cache: ResponseCache(capacity: configuration.responseCacheBytes),
            hosts: Router.HostPolicy(loopbackOnly: configuration.address.isLoopback, names: configuration.allowedHostNames))
        var limits = HTTPDaemon.Limits()
        limits.connectionTimeout = configuration.connectionTimeout
        limits.maxConnections = configuration.maxConnections
        let stopping = StopFlag()
        self.stopping = stopping
        do {
            daemon = try HTTPDaemon(address: configuration.address, port: configuration.port, limits: limits) {
                stopping.raised.load(ordering: .acquiring) ? Self.stoppingResponse : router.respond(to: $0)
            }
        } catch {
            access.close()
            throw error
        }
        feed.start()
    }

    /// `http://host:port/`.
    public var url: String { "http://\(address.display(port: port))/" }

    /// Ends the change streams, closes every connection, waits for the connection threads,
    /// and closes the store if the server opened it. Idempotent.
    public func stop() {
        stopping.raised.store(true, ordering: .releasing)
        feed.stop()
        daemon.stop()
        access.close()
    }

    /// What a request gets once the server is stopping.
    private static let stoppingResponse = HTTPResponse(
        status: 503,
        headers: Router.commonHeaders + [
            ("Content-Type", "application/json; charset=utf-8"), ("Cache-Control", "no-store"), ("Connection", "close"),
            ("Retry-After", "1"),
        ],
        body: JSONText.error(503, "the server is stopping"))
}

/// A flag set once, read by the daemon's threads.
private final class StopFlag: Sendable {
    let raised = Atomic<Bool>(false)
}

/// The same HTTP layer serving one fixed body for every request: the baseline that
/// `scripts/bench-serve.sh` compares ``ArticleServer`` with (how much the store's work costs
/// beside the HTTP library's own).
public final class FixedBodyServer: Sendable {
    private let daemon: HTTPDaemon
    /// The TCP port the server listens on.
    public var port: Int { daemon.port }

    /// Serves `body` as `application/json` on `address`:`port` (0: a free port), with the same
    /// daemon settings as ``ArticleServer``.
    public init(body: [UInt8], address: SocketAddress = .loopback, port: Int = 0) throws(ServeError) {
        let headers = Router.commonHeaders + [
            ("Content-Type", "application/json; charset=utf-8"), ("Cache-Control", "no-cache"),
            ("ETag", "W/\"0\""), ("Vary", "Accept-Encoding"),
        ]
        daemon = try HTTPDaemon(address: address, port: port, limits: HTTPDaemon.Limits()) { _ in
            HTTPResponse(status: 200, headers: headers, body: body)
        }
    }

    /// Closes every connection and stops listening.
    public func stop() { daemon.stop() }
}
