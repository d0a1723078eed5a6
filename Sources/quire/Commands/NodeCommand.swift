import Foundation
import QuireCluster
import QuireFetch
import QuireHTTP
import QuireNews
import QuireServe

/// What `quire node` does, given valid options (see `NodeOptions.swift`).
enum NodeCommand {
    static func run(_ options: NodeOptions, context: CommandContext) async throws {
        let key = context.environment["NYT_API_KEY"] ?? ""
        var sources: [any FetchSource] = []
        for spec in options.sources {
            switch spec {
            case .nyt(let query):
                guard !key.trimmingCharacters(in: .whitespaces).isEmpty else {
                    throw RuntimeError("node", "nyt:\(query) needs an API key: set NYT_API_KEY")
                }
                sources.append(
                    NYTSource(
                        query: NYTQuery(query: query, sort: .oldest), key: APIKey(key),
                        endpoint: FetchNYTCommand.endpoint(options.baseURL), maxPages: options.maxPages))
            case .feedzilla(let categories):
                sources.append(
                    FeedzillaSource(baseURL: FetchFeedzillaCommand.baseURL(options.baseURL), categories: categories))
            }
        }
        if !options.snapshotAddress.isLoopback {
            Diagnostics.error(
                "node: warning: serving snapshots on \(options.snapshotAddress), not the loopback address: anyone who can reach it can copy the whole store (there is no authentication)"
            )
        }
        let storePath = URL(fileURLWithPath: context.storePath).standardizedFileURL.path
        if StoreDirectoryCheck.isNonDirectory(storePath) {
            throw RuntimeError("node", "\(storePath): is a file, not a store (a store is a directory: give the node a new one, or the one it had)")
        }
        let member = options.memberID ?? defaultMemberID(storePath)
        var configuration = ClusterNode.Configuration(memberID: member, storePath: storePath)
        configuration.keys = ClusterKeys(prefix: options.prefix)
        configuration.leaseTTL = Int64(options.leaseTTL)
        configuration.rejoinRestoredLog = options.rejoinRestored
        configuration.compactionThreshold = Int64(options.compactAfter)
        configuration.snapshotAddress = options.snapshotAddress
        configuration.fetchRatePerMinute = options.ratePerMinute
        let client = EtcdClient(endpoints: options.endpoints)
        defer { client.shutdown() }
        let (events, continuation) = AsyncStream<ClusterEvent>.makeStream()
        let node = ClusterNode(configuration: configuration, client: client, sources: sources) {
            continuation.yield($0)
        }
        Diagnostics.error("node: starting member \(member) with etcd at \(options.endpoints.map(URLRedaction.redact).joined(separator: ",")) (Ctrl-C stops)")
        let task = Task {
            defer { continuation.finish() }
            try await node.run()
        }
        let watcher = Task {
            while !Task.isCancelled {
                if InterruptFlag.isRaised {
                    task.cancel()
                    return
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        defer { watcher.cancel() }
        // One line per event, flushed: scripts follow the node as it runs.
        do {
            for await event in events {
                try context.output.line(NodeEventLine.json(event, member: member, scrubbing: key))
                try context.output.flush()
            }
        } catch {
            // Its output gone (`quire node | head`): the node still stops as on Ctrl-C, its
            // lease revoked so that its sources are free at once, not after the TTL.
            task.cancel()
            _ = await task.result
            Diagnostics.error("node: stopped: its output was closed")
            throw error
        }
        if case .failure(let error) = await task.result, !(error is CancellationError) {
            throw RuntimeError("node", String(describing: error))
        }
        Diagnostics.error("node: stopped")
    }

    /// `<host>-<hash of the store path>`: stable across restarts, distinct per store.
    static func defaultMemberID(_ storePath: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in storePath.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "node"
        return host + "-" + String(hash & 0xFFFF_FFFF, radix: 16)
    }
}
