import Quire
import QuireServe

/// What `quire serve` does, given valid options (see `ServeOptions.swift`).
enum ServeCommand {
    static func run(_ options: ServeOptions, context: CommandContext) async throws {
        if !options.address.isLoopback {
            Diagnostics.error(
                "serve: warning: listening on \(options.address), not the loopback address: anyone who can reach it can read the store (there is no authentication)"
            )
        }
        if ReadOnlyStore.exists(at: context.storePath) {
            if Store.dataFileIsCutShort(at: context.storePath) {
                // What a whole file renamed over it mends: a server restarted by its supervisor
                // after the damage ended it answers 503 until then, as the one running did
                // (docs/HTTP.md).
                Diagnostics.error(
                    "serve: \(context.storePath): its data file is cut short; requests get 503 until a whole one is renamed over it")
            } else {
                // A store that is there but cannot be read (damaged, not a store, a newer format)
                // is refused as every command refuses it, not served as 503s for ever.
                try OpenStore.readOnly(context.storePath, command: "serve").close()
            }
        } else if StoreDirectoryCheck.isNonDirectory(context.storePath) || ReadOnlyStore.isHiddenByPermissions(context.storePath) {
            // A file never becomes a store, and a directory this user may not look into holds
            // one already: 503s saying "no store yet" for ever would hide the real cause.
            throw ReadOnlyStore.absence(at: context.storePath, command: "serve")
        } else {
            Diagnostics.error("serve: \(context.storePath): no store at this path yet; requests get 503 until one appears")
        }
        var configuration = ArticleServer.Configuration()
        configuration.address = options.address
        configuration.port = options.port
        configuration.responseCacheBytes = options.cacheBytes
        configuration.allowedHostNames = options.allowedHosts
        let server: ArticleServer
        do {
            server = try ArticleServer(storePath: context.storePath, configuration: configuration)
        } catch {
            throw RuntimeError("serve", error.description)
        }
        // Best effort: a server started with its output closed (a daemon's `>&-`) serves all the same.
        try? context.output.line("quire: serving \(TerminalText.escaped(context.storePath)) read-only at \(server.url) (Ctrl-C stops)")
        try? context.output.flush()
        while !context.isInterrupted {
            try? await Task.sleep(for: .milliseconds(100))
        }
        // The daemon's stop waits for the requests under way, and a search ranking a broad prefix
        // over a million articles takes seconds: past a second, the process ends without it
        // (serve writes nothing, so nothing is lost but that one answer).
        InterruptFlag.endStop(within: 1, saying: "quire: serve: stopped (a request under way was cut short)\n", status: 0)
        server.stop()
        InterruptFlag.stopFinished()
        Diagnostics.error("serve: stopped")
    }
}
