import QuireServe

/// `quire serve [--host ADDRESS] [--port N] [--cache-mb N]`
struct ServeOptions: CommandOptions {
    var address: SocketAddress
    var port: Int
    var cacheBytes: Int
    var allowedHosts: [String]

    static let spec = CommandSpec(
        name: "serve",
        abstract: "Serve the store read-only over HTTP: a JSON API and a web page.",
        discussion: """
            Listens on 127.0.0.1 unless --host names another address (then it warns: anyone who
            can reach that address can read the store). Requests must name the server by an IP
            address or localhost in their Host header, or by a name given with --allow-host:
            a web page on another name (DNS rebinding) gets 421. The store is opened read-only, so
            another process can fetch or load into it meanwhile; /api/changes streams its
            commits. Without a store at the path yet, requests get 503 until one appears.
            The first Ctrl-C (SIGINT or SIGTERM) stops the server cleanly. API: docs/HTTP.md.

            EXAMPLES:
              quire serve                          then open http://127.0.0.1:8080/
              quire serve --port 0                 any free port (printed on stdout)
              curl -s 'http://127.0.0.1:8080/api/articles?section=Opinion&limit=5'
            """,
        options: [
            .value("host", "address", help: "The numeric IPv4 or IPv6 address to listen on (or localhost).", default: "127.0.0.1"),
            .value("port", "n", help: "The TCP port; 0 picks a free one.", default: "8080"),
            .value(
                "cache-mb", "n",
                help: "Memory for answers reused until the store's next commit (0: none).", default: "32"),
            .repeated("allow-host", "name", help: "A host name requests may name (a reverse proxy's, or this machine's on the network)."),
        ])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        let host = arguments.value("host") ?? "127.0.0.1"
        guard let address = SocketAddress(host) else {
            throw arguments.invalid("host", host, "must be a numeric IPv4 or IPv6 address (or localhost)")
        }
        self.address = address
        port = try arguments.integer("port", in: 0...65_535) ?? 8080
        cacheBytes = (try arguments.integer("cache-mb", in: 0...65_536) ?? 32) << 20
        allowedHosts = arguments.allValues("allow-host")
        if let empty = allowedHosts.first(where: { $0.isEmpty || $0.contains(where: \.isWhitespace) }) {
            throw arguments.invalid("allow-host", empty, "must be a host name")
        }
    }

    func run(_ context: CommandContext) async throws { try await ServeCommand.run(self, context: context) }
}
