import Foundation
import Quire
import QuireFetch
import QuireHTTP
import Synchronization

/// Runs a fetch source into the store for a CLI command: progress on stderr, Ctrl-C stops
/// between pages (everything committed stays), errors as `quire: <command>: <why>`.
enum FetchRunner {
    static func run<Source: FetchSource>(
        _ source: Source, store: Store, service: FetchService, command: String, quiet: Bool, mode: FetchMode = .resume,
        keepRaw: Bool = false, pageLimit: Int? = nil, context: CommandContext
    ) async throws -> FetchSummary {
        let sink: StoreFetchSink
        do {
            sink = try StoreFetchSink(store: store, retainRawDocuments: keepRaw)
        } catch {
            throw RuntimeError(command, "\(store.path): \(OpenStore.reason(error))")
        }
        let progress = context.progress(command == "demo" ? "fetching" : command, unit: "articles", quiet: quiet)
        let task = Task {
            try await service.run(source, into: sink, mode: mode, pageLimit: pageLimit) { event in
                switch event {
                case .pageFetched(_, let records, _, _): progress.advance(by: records)
                case .rejected(let label, let index, _, let message):
                    // Always shown, even with --quiet: each is a document that was not stored.
                    // The message quotes the document: written escaped, like every diagnostic.
                    Diagnostics.error("\(command): rejected document \(index) of \(label): \(message)")
                case .skipped(let label, let message):
                    Diagnostics.error("\(command): \(label) set aside, the others fetched (the next run retries it): \(message)")
                case .waitingForRateLimit(let seconds) where seconds >= 1 && !quiet:
                    Diagnostics.write("quire: \(command): waiting \(Int(seconds.rounded()))s for the rate limit\n")
                case .retrying(let reason, let attempt, let seconds) where !quiet:
                    Diagnostics.write("quire: \(command): \(TerminalText.escaped("\(reason)")), retry \(attempt) in \(Int(seconds.rounded()))s\n")
                default: break
                }
            }
        }
        do {
            // Ctrl-C cancels the run: it stops between pages (or aborts the transfer).
            let summary = try await InterruptFlag.value(of: task)
            progress.finish()
            return summary
        } catch let error as FetchError {
            progress.finish()
            if context.isInterrupted { throw InterruptedError(command: command) }
            throw RuntimeError(command, error.description)
        }
    }

    /// The summary as one JSON object (`--json`), snake_case like `stats --json`.
    static func json(_ summary: FetchSummary, seconds: Double) -> String {
        JSONSummary.object([
            ("stored", .int(summary.articles)), ("new", .int(summary.newArticles)),
            ("updated", .int(summary.updatedArticles)), ("rejected", .int(summary.rejected)),
            ("skipped", .int(summary.skipped)),
            ("pages", .int(summary.pages)), ("retries", .int(summary.retries)), ("waits", .int(summary.waits)),
            ("waited_seconds", .double(summary.waitedSeconds)), ("resumed", .bool(summary.resumed)),
            ("complete", .bool(summary.isComplete)), ("already_complete", .bool(summary.alreadyComplete)),
            ("unreachable", .int(summary.unreachable)), ("seconds", .double(seconds)),
        ])
    }

    /// `stored 118, rejected 2 (110 new, 8 updated) from 12 pages in 3.1s (resumed)`, plus a
    /// sentence for a query window the API caps, or for a query that was already complete.
    static func describe(_ summary: FetchSummary, seconds: Double) -> String {
        if summary.alreadyComplete {
            return "already fetched to the end; nothing requested (--refresh fetches what is newer, --restart fetches it all again)"
        }
        var text = "stored \(summary.articles), rejected \(summary.rejected)"
        text += " (\(summary.newArticles) new, \(summary.updatedArticles) updated)"
        text += " from \(summary.pages) pages in \(String(format: "%.1f", seconds))s"
        if summary.retries > 0 { text += ", \(summary.retries) retries" }
        if summary.waits > 0 { text += ", waited \(Int(summary.waitedSeconds))s for the rate limit" }
        if summary.resumed { text += " (resumed)" }
        if !summary.isComplete { text += " (stopped before the end)" }
        if summary.rejected > 0 { text += "; see quire rejects, and quire remap after a fix" }
        if summary.skipped > 0 {
            text += "; \(summary.skipped) page\(summary.skipped == 1 ? "" : "s") set aside (above): run again to retry"
        }
        if summary.unreachable > 0 {
            text += "; \(summary.unreachable) results the API reported are unreachable (more than 1,000 in a single day): narrow the query with --fq or a search term to reach them"
        }
        return text
    }
}
