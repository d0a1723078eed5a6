import Foundation
import QuireHTTP
import QuireServe

/// A source a node competes for: `nyt:QUERY`, `feedzilla` or `feedzilla:ID,ID…`.
enum NodeSourceSpec: Sendable, Hashable {
    case nyt(query: String)
    case feedzilla(categories: [Int]?)

    init?(_ text: String) {
        if text.hasPrefix("nyt:"), text.count > 4 {
            self = .nyt(query: String(text.dropFirst(4)))
        } else if text == "feedzilla" {
            self = .feedzilla(categories: nil)
        } else if text.hasPrefix("feedzilla:") {
            let ids = text.dropFirst("feedzilla:".count).split(separator: ",").map { Int($0) }
            guard !ids.isEmpty, ids.allSatisfy({ ($0 ?? -1) >= 0 }) else { return nil }
            self = .feedzilla(categories: ids.compactMap { $0 })
        } else {
            return nil
        }
    }

    /// Whether both name one source, whatever the order of their categories.
    func fetchesTheSame(as other: NodeSourceSpec) -> Bool {
        switch (self, other) {
        case (.feedzilla(let a), .feedzilla(let b)): a.map(Set.init) == b.map(Set.init)
        default: self == other
        }
    }
}

/// `quire node --etcd URL[,URL…] [--fetch SOURCE…] [--base-url URL] [--member ID] [--lease-ttl S]
/// [--prefix P] [--compact-after N] [--snapshot-host ADDRESS] [--rate N/min] [--rejoin-restored]`
struct NodeOptions: CommandOptions {
    var endpoints: [String]
    var sources: [NodeSourceSpec]
    var baseURL: URL?
    var memberID: String?
    var leaseTTL: Int
    var prefix: String
    var compactAfter: Int
    var snapshotAddress: SocketAddress
    var ratePerMinute: Int
    var maxPages: Int?
    var rejoinRestored: Bool

    static let spec = CommandSpec(
        name: "node",
        abstract: "Run one cluster member: replicate the etcd log into the store, fetch the sources it owns.",
        discussion: """
            The member keeps a full replica of the cluster's log in the store (--store), reads
            never leave the machine, and competes with the other members for the ownership of
            each --fetch source: the owner fetches it page by page, each page committed once to
            the log in one etcd transaction. When a member dies, another one takes its sources
            over within the lease TTL. One JSON line per event goes to stdout. The first Ctrl-C
            (SIGINT or SIGTERM) stops it cleanly and frees its sources at once (exit status 0).
            A store holds one cluster's log: the node refuses a store of another etcd or --prefix,
            one with records of its own, and a directory with other files. See docs/CLUSTER.md.

            SOURCES:
              nyt:QUERY               The NYT Article Search query QUERY ($NYT_API_KEY is the key).
              feedzilla[:ID,ID…]      Feedzilla-style categories (all, or these ids).

            EXAMPLES:
              quire node --store a.db --etcd http://127.0.0.1:2379 --fetch nyt:election
              quire node --store b.db --etcd http://10.0.0.1:2379,http://10.0.0.2:2379 --fetch nyt:election
            """,
        options: [
            .required("etcd", "urls", help: "The etcd members' client URLs, comma-separated."),
            .repeated("fetch", "source", help: "A source to compete for: nyt:QUERY or feedzilla[:IDS]."),
            .value("base-url", "url", help: "The news API's base URL (default: the real API)."),
            .value("member", "id", help: "This member's id (default: host name and store path)."),
            .value("lease-ttl", "seconds", help: "How long a dead member keeps its sources.", default: "5"),
            .value("prefix", "key", help: "The etcd key prefix of the cluster.", default: "/quire/"),
            .value(
                "compact-after", "n", help: "Revisions every member applied before the log is compacted.",
                default: "500"),
            .value("snapshot-host", "address", help: "Where peers get snapshots of this store.", default: "127.0.0.1"),
            .value("rate", "n/min", help: "News API requests a minute, shared by the node's sources.", default: "5/min"),
            .value("max-pages", "n", help: "Stop each NYT source after this many pages."),
            .flag(
                "rejoin-restored",
                help: "After etcd was restored from a backup: resume this store after the log entries both hold."),
        ])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        let urls = try arguments.required("etcd")
        // Empty parts kept: `--etcd ""` or `a,,b` is a usage error, not a client with no endpoint.
        endpoints = urls.split(separator: ",", omittingEmptySubsequences: false).map { String($0) }
        for url in endpoints {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme), parsed.host?.isEmpty == false else {
                throw arguments.invalid("etcd", URLRedaction.redact(urls), "expected http:// or https:// URLs with a host, separated by commas")
            }
        }
        sources = []
        for text in arguments.allValues("fetch") {
            guard let source = NodeSourceSpec(text) else {
                throw arguments.invalid("fetch", text, "expected nyt:QUERY, feedzilla or feedzilla:ID,ID")
            }
            // Twice in one member (`feedzilla:1,2` and `feedzilla:2,1` too): two fetch loops of one
            // source, every page fetched twice.
            guard !sources.contains(where: { $0.fetchesTheSame(as: source) }) else {
                throw arguments.invalid("fetch", text, "is given twice")
            }
            sources.append(source)
        }
        baseURL = try arguments.url("base-url")
        memberID = arguments.value("member")
        if let memberID, memberID.isEmpty || memberID.contains("/") {
            throw arguments.invalid("member", memberID, "must be non-empty and contain no '/'")
        }
        leaseTTL = try arguments.integer("lease-ttl", in: 2...3600) ?? 5
        prefix = arguments.value("prefix") ?? "/quire/"
        guard !prefix.isEmpty else { throw arguments.invalid("prefix", prefix, "must not be empty") }
        compactAfter = try arguments.integer("compact-after", in: 1...Int.max) ?? 500
        let host = arguments.value("snapshot-host") ?? "127.0.0.1"
        guard let address = SocketAddress(host) else {
            throw arguments.invalid("snapshot-host", host, "must be a numeric IPv4 or IPv6 address")
        }
        // The address is published for peers to fetch snapshots from: a wildcard means "this
        // machine" to each of them.
        guard !address.isUnspecified else {
            throw arguments.invalid("snapshot-host", host, "must be an address peers reach this node at (0.0.0.0 and :: are not)")
        }
        snapshotAddress = address
        ratePerMinute = try FetchNYTOptions.parseRate(arguments) ?? 5
        maxPages = try arguments.integer("max-pages", in: 1...Int.max)
        rejoinRestored = arguments.flag("rejoin-restored")
    }

    func run(_ context: CommandContext) async throws { try await NodeCommand.run(self, context: context) }
}
