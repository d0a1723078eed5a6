import Foundation
import Quire
import QuireFetch
import QuireHTTP

/// What `quire fetch feedzilla` does, given valid options (see `FetchFeedzillaOptions.swift`).
enum FetchFeedzillaCommand {
    static let defaultBaseURL = "http://api.feedzilla.com/v1"

    static func run(_ options: FetchFeedzillaOptions, context: CommandContext) async throws {
        var ids: [Int] = []
        for text in options.categories {
            guard let id = Int(text), id >= 0 else {
                throw UsageError(command: "fetch feedzilla", message: "invalid value '\(text)' for '--category': expected a numeric id")
            }
            ids.append(id)
        }
        let source = FeedzillaSource(baseURL: baseURL(options.baseURL), categories: ids.isEmpty ? nil : ids)
        let store = try OpenStore.readWrite(context.storePath, command: "fetch feedzilla")
        defer { store.close() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let service = FetchService(client: client, rateLimiter: RateLimiter(perMinute: 60, perDay: 100_000))
        let start = ContinuousClock.now
        let summary = try await FetchRunner.run(
            source, store: store, service: service, command: "fetch feedzilla", quiet: options.quiet, mode: options.mode,
            json: options.json, context: context)
        if options.json {
            try context.output.line(FetchRunner.json(summary, seconds: seconds(since: start)))
        } else if !options.quiet {
            Diagnostics.write("quire: fetch feedzilla: \(FetchRunner.describe(summary, seconds: seconds(since: start), refresh: "--refresh fetches each category's latest articles again"))\n")
        }
    }

    /// The API root (`…/v1`) under a base URL given with or without `/v1`.
    static func baseURL(_ url: URL?) -> String {
        guard let url else { return defaultBaseURL }
        var text = url.absoluteString
        if text.hasSuffix("/") { text.removeLast() }
        return text.hasSuffix("/v1") ? text : text + "/v1"
    }
}
