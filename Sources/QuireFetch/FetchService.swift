import Foundation
public import QuireHTTP
import QuireNews

/// Fetches a source page by page into a ``FetchSink``, exactly once.
///
/// For each page: wait for the ``RateLimiter``, GET through the `HTTPClient` (retrying 429, 5xx
/// and transport failures per ``RetryPolicy``), map the body with the source, then commit the
/// records together with the checkpoint that follows them. A failure before the commit stores
/// nothing of that page; a rerun reads the checkpoint back and resumes at the first uncommitted
/// page. Cancellation is honoured between pages and aborts a transfer or wait in progress.
public struct FetchService: Sendable {
    /// The HTTP client (share one per process).
    public let client: HTTPClient
    /// The request budget.
    public let rateLimiter: RateLimiter
    /// Retries and back-off.
    public let retryPolicy: RetryPolicy
    /// Time and waiting.
    public let clock: any FetchClock

    /// A service.
    public init(
        client: HTTPClient, rateLimiter: RateLimiter = RateLimiter(), retryPolicy: RetryPolicy = RetryPolicy(),
        clock: any FetchClock = SystemFetchClock()
    ) {
        self.client = client
        self.rateLimiter = rateLimiter
        self.retryPolicy = retryPolicy
        self.clock = clock
    }

    /// Fetches `source` into `sink` from its stored checkpoint until it is done.
    ///
    /// - Parameters:
    ///   - startOver: Ignore the stored checkpoint and start from the beginning (records are
    ///     upserted by id, so nothing is duplicated). The same as `mode: .restart`.
    ///   - mode: What to do with the stored checkpoint (``FetchMode``); a finished source does
    ///     nothing in ``FetchMode/resume`` and says so in ``FetchSummary/alreadyComplete``.
    ///   - source: What to fetch.
    ///   - sink: Where pages go (a ``StoreFetchSink``).
    ///   - pageLimit: Stop after this many pages of this run (`--max-pages`); the next run goes
    ///     on from there. A source's own limit (`NYTSource.maxPages`) counts across runs.
    ///   - progress: Called with events as the run goes; never with the key.
    /// - Throws: ``FetchError``; pages committed before it stay committed.
    public func run<Source: FetchSource>(
        _ source: Source, into sink: some FetchSink, startOver: Bool = false, mode: FetchMode = .resume,
        pageLimit: Int? = nil, progress: (@Sendable (FetchProgress) -> Void)? = nil
    ) async throws(FetchError) -> FetchSummary {
        let secret = source.apiKey?.value
        var summary = FetchSummary()
        do {
            return try await walk(
                source, sink: sink, mode: startOver ? .restart : mode, pageLimit: pageLimit, summary: &summary,
                progress: progress ?? { _ in })
        } catch {
            var failure = error.scrubbing(secret)
            failure.committed = summary
            throw failure
        }
    }

    /// A query's articles: fetched now when the network works, else what `reader` holds,
    /// marked stale with the time it was fetched (the offline fallback).
    ///
    /// The fetch starts over (a refresh). Any failure falls back to the stored articles and is
    /// reported in ``FetchResult/failure``; ``FetchError/Code-swift.struct/isNetworkFailure``
    /// tells an outage from a rejected key or a bad query.
    public func articles<Source: FetchSource>(
        for source: Source, queryTag: String, sink: some FetchSink, reader: some OfflineReader,
        progress: (@Sendable (FetchProgress) -> Void)? = nil
    ) async -> FetchResult {
        var failure: FetchError?
        do {
            _ = try await run(source, into: sink, mode: .restart, progress: progress)
        } catch {
            failure = error
        }
        do {
            let stored = try reader.storedArticles(for: queryTag)
            return FetchResult(
                articles: stored.articles, isStale: failure != nil, fetchedAt: stored.fetchedAt, failure: failure)
        } catch {
            let readFailure = FetchError(
                code: .sink, message: "reading stored articles failed: \(error)", cause: error,
                location: .init(sourceID: source.sourceID)
            ).scrubbing(source.apiKey?.value)
            return FetchResult(articles: [], isStale: true, fetchedAt: nil, failure: failure ?? readFailure)
        }
    }

    // MARK: The loop

    private func walk<Source: FetchSource>(
        _ source: Source, sink: some FetchSink, mode: FetchMode, pageLimit: Int?, summary: inout FetchSummary,
        progress: @Sendable (FetchProgress) -> Void
    ) async throws(FetchError) -> FetchSummary {
        let sourceID = source.sourceID
        if let key = source.apiKey, key.value.trimmingCharacters(in: .whitespaces).isEmpty {
            throw FetchError(
                code: .unauthorized, message: "no API key: the source needs one (set NYT_API_KEY)",
                location: .init(sourceID: sourceID), attempts: 0)
        }
        var checkpoint = source.initialCheckpoint
        // A run of pages set aside earlier: they are not neighbours, so several failing again
        // are no outage (the rule would stop every other such run for good).
        var retrying = false
        // What the store holds now: each page commits only while it is still what this run
        // last read or wrote (two runs of one query at once fetched every page twice).
        let storedData = try await storedCheckpointData(source, sink: sink)
        var follows = StoredCheckpoint(storedData)
        if mode != .restart, let stored = try decodedCheckpoint(storedData, of: source) {
            checkpoint = stored
            summary.resumed = true
            if source.isFinished(stored) {
                // What the walk set aside comes first, in a refresh too (a job that only ever
                // refreshes would never fetch it).
                if let retry = source.retryCheckpoint(after: stored) {
                    checkpoint = retry
                    retrying = true
                } else if mode == .refresh, let fresh = source.refreshCheckpoint(after: stored, now: clock.now) {
                    checkpoint = fresh
                    summary.resumed = false  // a new walk of what is newer, not one taken up again
                } else if mode == .refresh {
                    checkpoint = source.initialCheckpoint
                    summary.resumed = false
                } else {
                    summary.alreadyComplete = true
                    summary.isComplete = true
                    progress(.finished(summary))
                    return summary
                }
            }
        }
        try await loadBudget(source, sink: sink)
        var random = JitterRandom(seed: retryPolicy.jitterSeed)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Ids by their bytes, as the store tells them apart (Swift's string equality merges
        // canonically equivalent ones).
        var seen: Set<[UInt8]> = []
        // Rejected documents by what they are quarantined as: one served twice is one reject.
        var seenRejects: Set<[UInt8]> = []
        // The ids this run wrote (new or changed): the others it stored were unchanged.
        var written: Set<[UInt8]> = []

        // The body is scrubbed as it arrives: everything a page stores or reports comes from it.
        let scrubber = SecretScrubber(source.apiKey)
        var skippedInARow = 0
        var transportFailuresInARow = 0
        walking: while true {
            while let request = source.nextRequest(after: checkpoint) {
                if let pageLimit, summary.pages + summary.skipped + summary.rerouted >= pageLimit { break }
                if Task.isCancelled { throw cancelled(sourceID, request) }
                let fetchedAt: Date
                var page: SourcePage<Source.Checkpoint>
                do throws(FetchError) {
                    // A server that echoes the key into its documents: scrubbed before mapping, so
                    // the articles, raw copies and rejects all hold the same text, none the key.
                    let response = try await fetch(
                        request, source: source, scrubber: scrubber, summary: &summary, random: &random, progress: progress)
                    let body = scrubber.scrub(response.body)
                    fetchedAt = clock.now
                    do {
                        page = try source.process(body, for: request, at: checkpoint)
                    } catch {
                        throw mappingFailure(error, sourceID: sourceID, request: request, status: response.status)
                    }
                    scrubber.scrub(&page)
                    skippedInARow = 0
                    transportFailuresInARow = 0
                } catch {
                    // The requests made count against the daily quota even when no page commits.
                    try? await sink.recordRequests(rateLimiter.requestTimes(before: clock.now), budget: source.budgetID)
                    // A page that fails for good is set aside when the source can go on without it;
                    // three in a row look like an outage, not one bad page, and stop the run.
                    // A run over set-aside pages keeps them apart, except for failures of the transfer:
                    // three of those in a row are an outage there too (not two pages refused before one).
                    let outage = retrying ? transportFailuresInARow >= 2 && error.code == .transport : skippedInARow >= 2
                    guard Self.canSkip(error), !outage, var next = source.skipping(request, at: checkpoint, after: error)
                    else {
                        throw error
                    }
                    if source.isFinished(next) { next = source.completed(next, at: clock.now) }
                    skippedInARow += 1
                    transportFailuresInARow = error.code == .transport ? transportFailuresInARow + 1 : 0
                    // Events reach the caller as they are: the error's texts are scrubbed first (only
                    // what `run` throws was).
                    let reason = Self.skipReason(error.scrubbing(source.apiKey?.value))
                    let setAsideChange = source.setAsideCount(in: next) - source.setAsideCount(in: checkpoint)
                    if setAsideChange > 0 {
                        progress(.skipped(label: request.label, message: reason))
                        summary.skipped += 1
                    } else {
                        // A page set aside and taken back (the first of two pages past a server's own
                        // page cap) is no page set aside: said, and not counted so.
                        let takenBack = -setAsideChange
                        summary.skipped = max(0, summary.skipped - takenBack)
                        let note = takenBack > 0 ? " (the page set aside before it lies past the server's page cap too: not retried)" : ""
                        progress(.rerouted(label: request.label, message: reason + note))
                        summary.rerouted += 1
                    }
                    // Only the checkpoint past it commits.
                    _ = try await commit(
                        SourcePage(articles: [], queryTag: nil, checkpoint: next), of: request, at: clock.now, source, sink,
                        encoder, follows: &follows)
                    checkpoint = next
                    summary.noteWalk(of: source, at: checkpoint)
                    continue
                }
                if source.isFinished(page.checkpoint) { page.checkpoint = source.completed(page.checkpoint, at: fetchedAt) }
                let outcome = try await commit(page, of: request, at: fetchedAt, source, sink, encoder, follows: &follows)
                checkpoint = page.checkpoint
                summary.pages += 1
                summary.records += page.articles.count
                // An article an earlier page of this run stored (a window's first page fetched again
                // after a split) is no article more: not counted unchanged, so the counts add up to
                // `stored`. (An id twice in one page is one article of the page.)
                let ids = Set(page.articles.map { Array($0.id.utf8) })
                // Looked up one by one: `subtracting` walked the whole run's set for every page.
                var repeats = 0
                for id in ids where !seen.insert(id).inserted { repeats += 1 }
                summary.newArticles += outcome.newArticles
                if let writtenIDs = outcome.writtenIDs {
                    for id in writtenIDs { written.insert(Array(id.utf8)) }
                    summary.unchangedArticles = seen.count - written.count
                } else {
                    summary.unchangedArticles += max(0, outcome.unchangedArticles - repeats)
                }
                summary.articles = seen.count
                for reject in page.rejects where seenRejects.insert(Self.rejectIdentity(reject, label: request.label)).inserted {
                    summary.rejected += 1
                }
                summary.documents += page.articles.count + page.rejects.count
                summary.unreachable += page.unreachable
                summary.noteWalk(of: source, at: checkpoint)
                for reject in page.rejects {
                    progress(.rejected(label: request.label, index: reject.index, path: reject.error.path,
                                       message: reject.error.description))
                }
                progress(.pageFetched(
                    label: request.label, records: page.articles.count, totalPages: summary.pages,
                    totalArticles: summary.articles))
            }
            // A refresh goes on past the pages set aside before it: retried alone, a page that
            // fails for good starved every later refresh (new articles never came, status 0).
            guard retrying, mode == .refresh, source.isFinished(checkpoint) else { break walking }
            retrying = false
            (skippedInARow, transportFailuresInARow) = (0, 0)
            checkpoint = source.refreshCheckpoint(after: checkpoint, now: clock.now) ?? source.initialCheckpoint
        }
        summary.isComplete = source.isFinished(checkpoint)
        summary.noteWalk(of: source, at: checkpoint)
        progress(.finished(summary))
        return summary
    }

    /// What tells a rejected document from others of the run: an object by its bytes (it is
    /// quarantined once, wherever it was served), anything else by its place too.
    private static func rejectIdentity(_ reject: DocumentReject, label: String) -> [UInt8] {
        if reject.rawDocument.first == UInt8(ascii: "{") { return reject.rawDocument }
        return reject.rawDocument + [0] + Array(label.utf8) + [0] + Array(String(reject.index).utf8)
    }

    /// Whether a failure is the page's own (a status refused, a 400 for one page of a query whose
    /// other pages worked, a server error after the retries, a body that cannot be mapped, a reply
    /// always cut short, undecodable, not HTTP, never finished or over the size limit), not the
    /// run's (no connection, a rejected key, the quota, a stop). A server that dies mid-body for
    /// every page is still an outage: three pages in a row stop the walk. (A bad query's 400 comes
    /// on its first page, which a source does not set aside.)
    static func canSkip(_ error: FetchError) -> Bool {
        switch error.code {
        case .forbidden, .badRequest, .unexpectedStatus, .serverError, .mapping, .htmlBody: true
        // A reply cut short, undecodable, not HTTP, never finished or too large: not a failed
        // connect (one document of 33 MiB stopped every run at its page).
        case .transport:
            // A page redirected in a loop, too: its own (a run stopped there on every run).
            (error.cause as? HTTPError).map { $0.isUnreadableReply || $0.code == .responseTooLarge || $0.code == .tooManyRedirects }
            ?? false
        default: false
        }
    }

    /// Why a page was set aside, in a few words: `malformed response: …`, `unexpected status (HTTP 404): …`.
    static func skipReason(_ error: FetchError) -> String {
        let status = error.httpStatus.map { $0 == 200 ? "" : " (HTTP \($0))" } ?? ""
        let why = error.cause.map { "\($0)" } ?? error.message
        return "\(error.code)\(status): \(why)"
    }

    /// Commits `page` (its records, rejects and checkpoint) in one transaction of the sink, if
    /// the stored checkpoint is still `follows`, which then becomes the page's.
    private func commit<Source: FetchSource>(
        _ page: SourcePage<Source.Checkpoint>, of request: SourceRequest, at fetchedAt: Date, _ source: Source,
        _ sink: some FetchSink, _ encoder: JSONEncoder, follows: inout StoredCheckpoint
    ) async throws(FetchError) -> PageCommit {
        let location = FetchError.Location(sourceID: source.sourceID, request: request.redactedURL)
        let encoded: Data
        do {
            encoded = try encoder.encode(page.checkpoint)
        } catch {
            throw FetchError(
                code: .checkpoint, message: "cannot encode the checkpoint: \(error)", cause: error, location: location)
        }
        let fetched = FetchedPage(
            sourceID: source.sourceID, articles: page.articles, lists: page.lists, categories: page.categories,
            rawDocuments: page.rawDocuments,
            rejects: page.rejects, pageLabel: request.label, mappingKind: source.mappingKind, queryTag: page.queryTag,
            checkpoint: encoded, fetchedAt: fetchedAt, budget: source.budgetID,
            requestTimes: rateLimiter.requestTimes(before: fetchedAt), follows: follows)
        do {
            let outcome = try await sink.commit(fetched)
            follows = .stored(encoded)
            return outcome
        } catch let moved as CheckpointMoved {
            throw FetchError(
                code: .concurrentRun,
                message: "another run of this source committed since this run read its checkpoint (two fetches of one query at once?); \(request.label) was not stored, the other run's pages are kept, and a later run goes on from them",
                cause: moved, location: location)
        } catch {
            throw FetchError(
                code: .sink, message: "committing \(request.label) failed: \(error)", cause: error, location: location)
        }
    }

    /// Reads the requests earlier runs made against the source's budget into the limiter.
    private func loadBudget<Source: FetchSource>(_ source: Source, sink: some FetchSink) async throws(FetchError) {
        do {
            rateLimiter.preload(try await sink.requestTimes(budget: source.budgetID), now: clock.now)
        } catch {
            throw FetchError(
                code: .sink, message: "reading the request budget failed: \(error)", cause: error,
                location: .init(sourceID: source.sourceID))
        }
    }

    private func storedCheckpointData<Source: FetchSource>(_ source: Source, sink: some FetchSink)
        async throws(FetchError) -> Data?
    {
        do {
            return try await sink.checkpoint(for: source.sourceID)
        } catch {
            throw FetchError(
                code: .sink, message: "reading the checkpoint failed: \(error)", cause: error,
                location: .init(sourceID: source.sourceID))
        }
    }

    private func decodedCheckpoint<Source: FetchSource>(_ data: Data?, of source: Source) throws(FetchError)
        -> Source.Checkpoint?
    {
        let location = FetchError.Location(sourceID: source.sourceID)
        guard let data else { return nil }
        let checkpoint: Source.Checkpoint
        do {
            checkpoint = try JSONDecoder().decode(Source.Checkpoint.self, from: data)
        } catch {
            throw FetchError(
                code: .checkpoint, message: "the stored checkpoint cannot be decoded: \(error)", cause: error,
                location: location)
        }
        guard source.accepts(checkpoint) else {
            throw FetchError(
                code: .checkpoint, message: "the stored checkpoint belongs to another query", location: location)
        }
        return checkpoint
    }

    // MARK: One request, with retries

    private func fetch<Source: FetchSource>(
        _ request: SourceRequest, source: Source, scrubber: SecretScrubber, summary: inout FetchSummary,
        random: inout JitterRandom, progress: @Sendable (FetchProgress) -> Void
    ) async throws(FetchError) -> (body: [UInt8], status: Int) {
        let sourceID = source.sourceID
        let location = FetchError.Location(sourceID: sourceID, request: request.redactedURL)
        var failedAttempts = 0
        var rateLimitedFor = Duration.zero
        while true {
            if Task.isCancelled { throw cancelled(sourceID, request) }
            if !retryPolicy.waitForQuota, let freeAt = rateLimiter.dailyBudgetFreeAt(clock.now) {
                throw FetchError(
                    code: .quotaExhausted,
                    message: "all \(rateLimiter.perDay) requests of the last 24 hours spent; resume after \(Self.utcTime(freeAt, from: clock.now)) UTC, or wait with --wait (or raise --daily-budget)",
                    location: location, attempts: failedAttempts + 1)
            }
            let slot: Date
            do {
                var waits = 0
                let (waited, taken) = try await rateLimiter.acquireSlot(clock: clock) { wait in
                    waits += 1
                    progress(.waitingForRateLimit(seconds: wait.seconds))
                }
                slot = taken
                summary.waits += waits
                summary.waitedSeconds += waited.seconds
            } catch {
                throw cancelled(sourceID, request)
            }

            let reason: RetryPolicy.Reason
            var status: Int?
            var curlCode: Int32?
            var lastMessage: String
            var cause: (any Error & Sendable)?
            var retryAfter: Duration?
            do {
                let response = try await client.get(request.url, headers: [("Accept", "application/json")])
                status = response.status
                retryAfter = Self.retryAfter(response, now: clock.now)
                switch response.status {
                case 200..<300 where Self.isRateLimitFault(response):
                    reason = .rateLimited
                case 200..<300:
                    return (response.utf8Body, response.status)
                case 429:
                    reason = .rateLimited
                case 403 where Self.isOverRate(response):
                    reason = .rateLimited
                case 500..<600:
                    reason = .serverError(response.status)
                default:
                    throw rejection(response, scrubber: scrubber, location: location, attempts: failedAttempts + 1)
                }
                lastMessage = Self.explain(scrubber.scrub(response.utf8Body))
            } catch let error as FetchError {
                throw error
            } catch let error as HTTPError {
                if error.code == .cancelled { throw cancelled(sourceID, request) }
                guard error.isRetryable else {
                    // The location names the request, and the error's code its curl code.
                    throw FetchError(
                        code: .transport, message: "\(error.code): \(error.message)", cause: error, location: location,
                        curlCode: error.curlCode, attempts: failedAttempts + 1)
                }
                if error.code == .connectionFailed { rateLimiter.release(slot) }
                reason = .transport(error.code.description)
                curlCode = error.curlCode
                // The location names the request already.
                lastMessage = "\(error.code): \(error.message)"
                cause = error
            } catch {
                throw FetchError(code: .transport, message: "\(error)", location: location)
            }

            failedAttempts += 1
            var next = retryPolicy.delay(after: reason, failedAttempts: failedAttempts, random: &random)
            if reason == .rateLimited, let wait = next {
                var honoured = wait
                if let retryAfter, retryAfter > honoured { honoured = min(retryAfter, retryPolicy.waitForQuota ? .seconds(86_400) : retryAfter) }
                let giveUp = !retryPolicy.waitForQuota && rateLimitedFor + honoured > retryPolicy.rateLimitGiveUp
                next = giveUp ? nil : honoured
                if let chosen = next { rateLimitedFor += chosen }
            }
            guard let delay = next else {
                if reason == .rateLimited {
                    let asked = retryAfter.map { "the server asked to wait \(Int($0.components.seconds))s; " } ?? ""
                    throw FetchError(
                        code: .rateLimited,
                        message: "rate limited (quota likely exhausted); \(asked)resume later, or wait with --wait (last reply: \(lastMessage))",
                        cause: cause, location: location, httpStatus: status, attempts: failedAttempts)
                }
                let code: FetchError.Code = if case .serverError = reason { .serverError } else { .transport }
                throw FetchError(
                    code: code, message: lastMessage, cause: cause, location: location,
                    httpStatus: status, curlCode: curlCode, attempts: failedAttempts)
            }
            summary.retries += 1
            summary.backoffSeconds += delay.seconds
            progress(.retrying(reason: reason, attempt: failedAttempts + 1, seconds: delay.seconds))
            do {
                try await clock.sleep(for: delay)
            } catch {
                throw cancelled(sourceID, request)
            }
        }
    }

    /// The old gateway's rate-limit reply: a 403 whose `X-Mashery-Error-Code` is
    /// `ERR_403_DEVELOPER_OVER_RATE` (or whose body says "Developer Over Rate").
    static func isOverRate(_ response: HTTPResponse) -> Bool {
        if let code = response.header("X-Mashery-Error-Code"), code.uppercased().contains("OVER_RATE") { return true }
        return response.body.count < 65_536 && response.bodyText.lowercased().contains("developer over rate")
    }

    /// A gateway's rate-limit fault sent with a success status (`{"fault":{…,"detail":
    /// {"errorcode":"policies.ratelimit.QuotaViolation"}}}` behind a proxy that rewrites the
    /// 429): waited out and retried as a 429 is, not set aside as a page that cannot be mapped.
    static func isRateLimitFault(_ response: HTTPResponse) -> Bool {
        // A fault is a few hundred bytes; a page of articles is not parsed twice.
        guard response.body.count < 4_096 else { return false }
        do {
            _ = try NYTArticleSearch.parsePage(response.utf8Body)
            return false
        } catch {
            guard case .apiFault(let message, let code) = error.kind else { return false }
            let words = ((code ?? "") + " " + message).lowercased()
            return ["ratelimit", "rate limit", "quotaviolation", "quota violation", "spikearrest"].contains { words.contains($0) }
        }
    }

    /// A `Retry-After` header as a wait: delta seconds, or an HTTP date; `nil` when absent or unreadable.
    static func retryAfter(_ response: HTTPResponse, now: Date) -> Duration? {
        guard let text = response.header("Retry-After")?.trimmingCharacters(in: .whitespaces), !text.isEmpty else {
            return nil
        }
        if let seconds = Int(text), seconds >= 0 { return .seconds(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: text) else { return nil }
        return .milliseconds(max(0, Int(date.timeIntervalSince(now) * 1000)))
    }

    /// `HH:MM` of `date` in UTC, with its day (`2026-12-06 18:46`) when that is not the day of `now`.
    static func utcTime(_ date: Date, from now: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        let time = String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
        guard !calendar.isDate(date, inSameDayAs: now) else { return time }
        return String(format: "%04d-%02d-%02d ", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0) + time
    }

    /// The typed error for a status that must not be retried (401, 400, 403, 404…).
    private func rejection(
        _ response: HTTPResponse, scrubber: SecretScrubber, location: FetchError.Location, attempts: Int
    ) -> FetchError {
        let code: FetchError.Code =
            switch response.status {
            case 401: .unauthorized
            case 400: .badRequest
            case 403: .forbidden
            default: .unexpectedStatus
            }
        let hint = response.status == 401 ? " (check the API key)" : ""
        return FetchError(
            code: code, message: Self.explain(scrubber.scrub(response.utf8Body)) + hint, location: location,
            httpStatus: response.status, attempts: attempts)
    }

    /// A short text for an error body: the API's fault or error messages, or what the body is.
    /// The server's own words are cut to ``explanationLimit`` characters: a body of 100 KB of
    /// messages made one 100 KB line of every error and log.
    static func explain(_ body: [UInt8]) -> String {
        do {
            _ = try NYTArticleSearch.parsePage(body)
            return "unexpected body"
        } catch {
            switch error.kind {
            case .apiFault, .apiError, .html, .emptyBody:
                let text = error.description
                guard text.count > explanationLimit else { return text }
                return text.prefix(explanationLimit) + "… (\(text.count - explanationLimit) more characters)"
            default:
                // A proxy's or a server's own words (`{"message":"upstream timed out"}`, plain
                // text) say more than a byte count.
                guard body.count <= 65_536,
                    let text = String(validating: body, as: UTF8.self)?.trimmingCharacters(in: .whitespacesAndNewlines),
                    !text.isEmpty
                else { return "unreadable body (\(body.count) bytes)" }
                let shown = text.count > explanationLimit ? text.prefix(explanationLimit) + "…" : Substring(text)
                return "body: \(shown)"
            }
        }
    }

    static let explanationLimit = 500

    private func mappingFailure(_ error: NewsMappingError, sourceID: String, request: SourceRequest, status: Int) -> FetchError {
        let code: FetchError.Code =
            switch error.kind {
            case .html: .htmlBody
            default: .mapping
            }
        if case .unknownCategories = error.kind {
            // The list was read fine: what was asked for is wrong, not the response.
            return FetchError(
                code: .invalidQuery, message: "\(error); nothing was fetched", cause: error,
                location: .init(sourceID: sourceID, request: request.redactedURL))
        }
        return FetchError(
            code: code,
            message: "\(request.label) could not be mapped: \(error) (nothing of this page was stored; the checkpoint is kept, so a later run retries it)",
            cause: error,
            location: .init(sourceID: sourceID, request: request.redactedURL), httpStatus: status,
            jsonPath: error.path)
    }

    private func cancelled(_ sourceID: String, _ request: SourceRequest) -> FetchError {
        FetchError(
            code: .cancelled, message: "cancelled before \(request.label) was committed", cause: CancellationError(),
            location: .init(sourceID: sourceID, request: request.redactedURL))
    }
}

extension FetchSummary {
    /// Takes the walk's state at `checkpoint`, not this run's alone: a run that completes a
    /// resumed walk, or stops in it, tells what the walk has left out so far.
    mutating func noteWalk<Source: FetchSource>(of source: Source, at checkpoint: Source.Checkpoint) {
        setAside = source.stillSetAside(in: checkpoint)
        unreachable = max(unreachable, source.unreachableResults(in: checkpoint))
        datesIgnored = datesIgnored || source.datesIgnored(in: checkpoint)
    }
}
