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
        keepRaw: Bool = false, pageLimit: Int? = nil, json: Bool = false, context: CommandContext
    ) async throws -> FetchSummary {
        let sink: StoreFetchSink
        do {
            sink = try StoreFetchSink(store: store, retainRawDocuments: keepRaw)
        } catch {
            throw RuntimeError(command, "\(store.path): \(OpenStore.reason(error))")
        }
        let progress = context.progress(command == "demo" ? "fetching" : command, unit: "articles", quiet: quiet)
        let rejectLines = RejectLines()
        let start = ContinuousClock.now
        let task = Task {
            try await service.run(source, into: sink, mode: mode, pageLimit: pageLimit) { event in
                switch event {
                case .pageFetched(_, _, _, let articles):
                    // Distinct articles, as the summary counts them (a story two categories list is one).
                    progress.setCompleted(articles)
                case .rejected(let label, let index, _, let message):
                    // Shown even with --quiet: each is a document that was not stored. The
                    // message quotes the document: written escaped, like every diagnostic.
                    switch rejectLines.next() {
                    case .shown: Diagnostics.error("\(command): rejected document \(index) of \(label): \(message)")
                    case .first:
                        Diagnostics.error(
                            "\(command): more than \(RejectLines.limit) documents rejected: the others are not listed here (the summary counts them; quire rejects lists them all)")
                    case .counted: break
                    }
                case .skipped(let label, let message):
                    Diagnostics.error("\(command): \(label) set aside, the others fetched (retried later): \(message)")
                case .rerouted(let label, let message):
                    Diagnostics.error("\(command): \(label) failed; its results are asked for another way (narrower windows, or later): \(message)")
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
            progress.finish(stopped: true)
            let interrupted = context.isInterrupted
            report(
                error.committed, stoppedBy: interrupted ? nil : error, command: command, json: json,
                resumes: command != "demo", seconds: seconds(since: start), context: context)
            if interrupted { throw InterruptedError(command: command, writes: true) }
            // The command names the source already: the error's own naming of it would repeat it.
            throw RuntimeError(command, error.reason)
        }
    }

    /// Says what a run that stopped before its end committed (it stays; the next run resumes
    /// after it): a line on stderr, or with `--json` the summary object on stdout, the keys of
    /// a finished run's with `complete` false, and the error, or `interrupted`.
    private static func report(
        _ done: FetchSummary, stoppedBy error: FetchError?, command: String, json: Bool,
        resumes: Bool,  // false for the demo, which fetches anew each run
        seconds: Double, context: CommandContext
    ) {
        if json {
            var stopped = done
            stopped.isComplete = false
            try? context.output.line(
                Self.json(
                    stopped, seconds: seconds,
                    extra: [("interrupted", .bool(error == nil)), ("error", error.map { .string($0.reason) } ?? .null)]))
            try? context.output.flush()
        } else if done.pages > 0 {
            Diagnostics.write(
                "quire: \(command): before it stopped, \(done.pages) page\(done.pages == 1 ? "" : "s") committed (\(done.articles) articles, \(done.rejected) rejected): they stay\(resumes ? ", and the next run resumes after them" : " (the next run fetches from the start again)")\n")
        }
    }

    /// The summary as one JSON object (`--json`), snake_case like `stats --json`.
    /// A run that stopped adds `interrupted` and `error` (`extra`).
    static func json(_ summary: FetchSummary, seconds: Double, extra: [(String, JSONSummary.Value)] = []) -> String {
        JSONSummary.object([
            ("stored", .int(summary.articles)), ("new", .int(summary.newArticles)),
            ("updated", .int(summary.updatedArticles)), ("unchanged", .int(summary.unchangedArticles)),
            ("rejected", .int(summary.rejected)),
            ("skipped", .int(summary.skipped)), ("rerouted", .int(summary.rerouted)), ("set_aside", .int(summary.setAside)),
            ("pages", .int(summary.pages)), ("retries", .int(summary.retries)), ("waits", .int(summary.waits)),
            ("waited_seconds", .double(summary.waitedSeconds)), ("resumed", .bool(summary.resumed)),
            ("complete", .bool(summary.isComplete)), ("already_complete", .bool(summary.alreadyComplete)),
            ("unreachable", .int(summary.unreachable)), ("dates_ignored", .bool(summary.datesIgnored)),
            ("seconds", .double(seconds)),
        ] + extra)
    }

    /// `stored 118, rejected 2 (110 new, 8 updated) from 12 pages in 3.1s (resumed)`, plus a
    /// sentence for a query window the API caps, or for a query that was already complete.
    /// `refresh` says what `--refresh` does for this source.
    static func describe(
        _ summary: FetchSummary, seconds: Double, refresh: String = "--refresh fetches what is newer"
    ) -> String {
        if summary.alreadyComplete {
            return "already fetched to the end; nothing requested (\(refresh), --restart fetches it all again)"
        }
        var text = "stored \(summary.articles), rejected \(summary.rejected)"
        text += " (\(summary.newArticles) new, \(summary.updatedArticles) updated"
        text += summary.unchangedArticles > 0 ? ", \(summary.unchangedArticles) unchanged)" : ")"
        text += " from \(summary.pages) page\(summary.pages == 1 ? "" : "s") in \(String(format: "%.1f", seconds))s"
        if summary.retries > 0 {
            text += ", \(summary.retries) retr\(summary.retries == 1 ? "y" : "ies")"
            if summary.backoffSeconds >= 1 { text += " after \(Int(summary.backoffSeconds))s of back-off" }
        }
        if summary.waits > 0 { text += ", waited \(Int(summary.waitedSeconds))s for the rate limit" }
        if summary.resumed { text += " (resumed)" }
        if !summary.isComplete { text += " (stopped before the end)" }
        if summary.rejected > 0 { text += "; see quire rejects, and quire remap after a fix" }
        if summary.setAside > 0 {
            let earlier = summary.setAside > summary.skipped ? ", by this run or an earlier one" : " (above)"
            text += "; \(summary.setAside) page\(summary.setAside == 1 ? "" : "s") set aside\(earlier): run again to retry"
        }
        if summary.datesIgnored {
            text += "; the API answered date ranges with results outside them (it ignores begin_date and end_date), so the walk could not narrow the query by dates: \(summary.unreachable) results it reported are unreachable; narrow the query with --fq or a search term"
        } else if summary.unreachable > 0 {
            text += "; \(summary.unreachable) results the API reported are unreachable (more than 1,000 in a single day): narrow the query with --fq or a search term to reach them"
        }
        return text
    }
}

/// How many reject lines a run prints: a page of 100,000 bad documents printed 100,000 lines.
private final class RejectLines: Sendable {
    static let limit = 100
    private let count = Mutex(0)

    enum Line { case shown, first, counted }

    /// The next reject's line: shown, the one saying the rest are not, or none.
    func next() -> Line {
        count.withLock { count in
            count += 1
            return count <= Self.limit ? .shown : count == Self.limit + 1 ? .first : .counted
        }
    }
}
