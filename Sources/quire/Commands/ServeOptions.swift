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
        // A name of letters, digits, dots and hyphens (`*` or `http://x` admitted only a `Host`
        // of those very characters, never what was meant).
        func isHostName(_ name: String) -> Bool {
            !name.isEmpty && name.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x2E
            }
        }
        if let bad = allowedHosts.first(where: { !isHostName($0) }) {
            throw arguments.invalid("allow-host", bad, "must be a host name (letters, digits, dots and hyphens)")
        }
    }

    func run(_ context: CommandContext) async throws { try await ServeCommand.run(self, context: context) }
}
