import Foundation
import Synchronization
import Testing

@testable import quire

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct CommandLineDateTests {
    @Test(arguments: [
        ("1970-01-01", 0.0), ("19700102", 86_400.0), ("2000-02-29", 951_782_400.0), ("2016-11-08", 1_478_563_200.0),
        ("19691231", -86_400.0),
    ])
    func parsesBothSpellingsAsUTCMidnight(_ text: String, _ seconds: Double) throws {
        let date = try #require(CommandLineDate.parse(text))
        #expect(date.timeIntervalSince1970 == seconds)
    }

    @Test(arguments: [
        "", "2021-1-01", "2021/01/01", "202101011", "2021-02-29", "1900-02-29", "2021-00-10", "2021-04-31",
        "0000-01-01", "abcd-ef-gh", "2021-01-0x", "+2021-01-1",
    ])
    func rejectsWhatIsNotACalendarDay(_ text: String) {
        #expect(CommandLineDate.parse(text) == nil)
    }

    @Test func formatIsTheInverseOfParse() throws {
        for text in ["0001-01-01", "1600-02-29", "1999-12-31", "2024-02-29", "9999-12-31"] {
            let date = try #require(CommandLineDate.parse(text))
            #expect(CommandLineDate.format(date) == text)
        }
    }
}

@Suite struct ProgressFormattingTests {
    @Test func barShowsCountsRateAndETA() {
        let line = ProgressReporter.barLine(
            label: "loading", completed: 50, total: 100, seconds: 2, unit: "records", final: false, barWidth: 10)
        #expect(line == "loading  [#####.....]  50/100  25.0/s  ETA 2.0s")
    }

    @Test func unknownTotalShowsCountAndRateOnly() {
        let line = ProgressReporter.plainLine(
            label: "fetching", completed: 12_345, total: nil, seconds: 1, unit: "pages", final: false)
        #expect(line == "quire: fetching: 12,345 pages, 12.3k/s")
    }

    @Test func finalLineSaysHowLongItTook() {
        let line = ProgressReporter.plainLine(
            label: "verify", completed: 3_000_000, total: 3_000_000, seconds: 75, unit: "records", final: true)
        #expect(line == "quire: verify: 3,000,000/3,000,000 records, 40.0k/s, done in 1m15s")
        // Work that failed or was interrupted is not "done".
        let stopped = ProgressReporter.plainLine(
            label: "loading", completed: 46_238, total: nil, seconds: 4.6, unit: "records", final: true, stopped: true)
        #expect(stopped == "quire: loading: 46,238 records, 10.1k/s, stopped after 4.6s")
        // A stage that has done nothing yet shows no rate ("0.0/s" said nothing).
        let starting = ProgressReporter.plainLine(
            label: "loading, merging sorted runs", completed: 0, total: 94_111, seconds: 0.4, unit: "records", final: false)
        #expect(starting == "quire: loading, merging sorted runs: 0/94,111 records")
    }

    @Test func aTableCellIsCappedAtItsLength() {
        #expect(RecordWriter.capped("short", 200) == "short")
        #expect(RecordWriter.capped(String(repeating: "é", count: 200), 200) == String(repeating: "é", count: 200))
        #expect(RecordWriter.capped(String(repeating: "é", count: 201), 200) == String(repeating: "é", count: 200) + "…")
    }

    @Test func durationsAndGrouping() {
        #expect(ProgressReporter.duration(3725) == "1h02m")
        #expect(ProgressReporter.duration(42) == "42s")
        #expect(ProgressReporter.grouped(999) == "999")
        #expect(ProgressReporter.grouped(-1_000) == "-1,000")
        #expect(ProgressReporter.rate(completed: 5, seconds: 0) == "-/s")
    }

    @Test func quietWritesNothingAndLinesAreThrottled() {
        let lines = Lines()
        let quiet = ProgressReporter(label: "x", style: .quiet, write: { lines.append($0) })
        for _ in 0..<1000 { quiet.advance() }
        quiet.finish()
        #expect(lines.all.isEmpty)

        let plain = ProgressReporter(label: "x", total: 1000, style: .lines, write: { lines.append($0) })
        for _ in 0..<1000 { plain.advance() }
        plain.finish()
        plain.finish()
        // Short work (all within the first two-second window) draws nothing, not even at finish.
        #expect(lines.all.isEmpty)
    }
}

/// Collects what a reporter writes (thread-safe, as the reporter may be called from any thread).
final class Lines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

@Suite struct ParserTests {
    let parser = CommandTable.parser

    @Test func parsesTypedOptions() throws {
        let outcome = try parser.parse([
            "--store", "/tmp/s", "fetch", "nyt", "--query=a b", "--begin", "20160101", "--sort", "oldest",
            "--max-pages", "3", "--rate", "10/min",
        ])
        guard case .run(let parsed) = outcome else {
            Issue.record("expected a command to run, got \(outcome)")
            return
        }
        #expect(parsed.commandPath == ["fetch", "nyt"])
        let options = try FetchNYTOptions(parsing: parsed)
        #expect(options.query == "a b")
        #expect(options.begin == CommandLineDate.parse("2016-01-01"))
        #expect(options.sort == .oldest)
        #expect(options.maxPages == 3)
        #expect(options.ratePerMinute == 10)
        #expect(try GlobalOptions(parsing: parsed, environment: [:]).storePath == "/tmp/s")
    }

    /// The NYT's daily budget is the default for any server but one on this machine.
    @Test func theDefaultDailyBudgetSparesALocalServer() throws {
        guard case .run(let parsed) = try parser.parse(["fetch", "nyt", "--query", "q"]) else {
            Issue.record("expected a command to run")
            return
        }
        let options = try FetchNYTOptions(parsing: parsed)
        for (url, local) in [
            ("http://127.0.0.1:8080", true), ("http://localhost:9/svc", true), ("http://[::1]:80/", true),
            ("http://127.9.9.9", true), ("https://api.nytimes.com/svc/search/v2/articlesearch.json", false),
            ("http://10.0.0.1:8080", false), ("http://127.0.0.1.example.com/", false),
            ("http://127.1:80/", true), ("http://0x7f000001/", true), ("http://LOCALHOST./", true),
            ("http://[::ffff:127.0.0.1]/", true), ("http://[::ffff:7f00:1]/", true), ("http://[::ffff:10.0.0.1]/", false),
            ("http://[::2]/", false), ("http://0.0.0.0:8080/", true), ("http://[::]:80/", true),
            ("http://0.0.0.1/", false),
        ] {
            #expect(LoopbackURL.isLoopback(url) == local, "\(url)")
            #expect(options.requestsPerDay(endpoint: url) == (local ? Int.max : 500), "\(url)")
        }
        guard case .run(let set) = try parser.parse(["fetch", "nyt", "--query", "q", "--daily-budget", "50"]) else {
            Issue.record("expected a command to run")
            return
        }
        #expect(try FetchNYTOptions(parsing: set).requestsPerDay(endpoint: "http://127.0.0.1:1") == 50)
    }

    @Test func storeComesFromTheEnvironmentThenTheDefault() throws {
        guard case .run(let parsed) = try parser.parse(["stats"]) else {
            Issue.record("expected a command to run")
            return
        }
        #expect(try GlobalOptions(parsing: parsed, environment: ["QUIRE_STORE": "/e"]).storePath == "/e")
        #expect(try GlobalOptions(parsing: parsed, environment: [:]).storePath == "./quire.db")
    }

    @Test func repeatedOptionsKeepEveryValueInOrder() throws {
        guard case .run(let parsed) = try parser.parse(["fetch", "feedzilla", "--category", "3", "--category=1"])
        else {
            Issue.record("expected a command to run")
            return
        }
        #expect(try FetchFeedzillaOptions(parsing: parsed).categories == ["3", "1"])
    }

    @Test func doubleDashEndsOptionsAndDashIsStdin() throws {
        guard case .run(let get) = try parser.parse(["get", "--", "--weird-id"]) else {
            Issue.record("expected a command to run")
            return
        }
        #expect(try GetOptions(parsing: get).id == "--weird-id")
        guard case .run(let load) = try parser.parse(["load", "-"]) else {
            Issue.record("expected a command to run")
            return
        }
        #expect(try LoadOptions(parsing: load).path == nil)
    }

    @Test func shortFlagsGoTogether() throws {
        guard case .run(let load) = try parser.parse(["load", "-qq", "x.jsonl"]) else {
            Issue.record("expected a command to run")
            return
        }
        #expect(load.flag("quiet"))
        #expect(try LoadOptions(parsing: load).path == "x.jsonl")
        guard case .help(let path, _) = try parser.parse(["load", "-qh"]) else {
            Issue.record("expected the help")
            return
        }
        #expect(path == ["load"])
        let unknown = #expect(throws: UsageError.self) { try parser.parse(["load", "-qz"]) }
        #expect(unknown?.message.hasPrefix("unknown option '-z'") == true, "\(String(describing: unknown))")
    }

    @Test func versionOnlyAtTheTop() throws {
        guard case .version = try parser.parse(["--version"]) else {
            Issue.record("expected the version")
            return
        }
        #expect(throws: UsageError.self) { try parser.parse(["dump", "--version"]) }
        let extra = #expect(throws: UsageError.self) { try parser.parse(["--version", "load"]) }
        #expect(extra?.message == "unexpected argument 'load' after '--version'", "\(String(describing: extra))")
        let secret = #expect(throws: UsageError.self) { try parser.parse(["--version", "--api-key=s3cr3t"]) }
        #expect(secret?.message == "unexpected argument '--api-key' after '--version'", "\(String(describing: secret))")
        guard case .version = try parser.parse(["--store", "x.db", "--version"]) else {
            Issue.record("expected the version after a global option")
            return
        }
    }
}

@Suite struct OutputWriterTests {
    @Test func aClosedPipeIsReportedAsBrokenPipe() throws {
        signal(SIGPIPE, SIG_IGN)
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        close(fds[0])
        defer { close(fds[1]) }
        let writer = OutputWriter(fileDescriptor: fds[1], capacity: 16)
        #expect(throws: OutputError.brokenPipe) {
            for _ in 0..<100 { try writer.line("a line that fills the small buffer") }
        }
    }

    @Test func everythingWrittenArrivesAfterFlush() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let writer = OutputWriter(fileDescriptor: fds[1], capacity: 8)
        try writer.line("héllo")
        try writer.write("wörld")
        try writer.flush()
        close(fds[1])
        let data = FileHandle(fileDescriptor: fds[0]).readDataToEndOfFile()
        #expect(String(decoding: data, as: UTF8.self) == "héllo\nwörld")
    }
}

@Suite struct EndpointTests {
    @Test(arguments: [
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/svc/search/v2/articlesearch.json"),
        ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/svc/search/v2/articlesearch.json"),
        ("http://h/svc/search/v2", "http://h/svc/search/v2/articlesearch.json"),
        ("http://h/svc/search/v2/articlesearch.json", "http://h/svc/search/v2/articlesearch.json"),
        ("http://h/proxy", "http://h/proxy/svc/search/v2/articlesearch.json"),
    ])
    func nytEndpointUnderABaseURL(base: String, endpoint: String) {
        #expect(FetchNYTCommand.endpoint(URL(string: base)) == endpoint)
    }

    @Test func feedzillaRootUnderABaseURL() {
        #expect(FetchFeedzillaCommand.baseURL(URL(string: "http://h:1")) == "http://h:1/v1")
        #expect(FetchFeedzillaCommand.baseURL(URL(string: "http://h:1/v1/")) == "http://h:1/v1")
    }
}

@Suite struct InterruptMessageTests {
    /// A reading command's stop changed nothing; "the store is consistent" was read as a
    /// verdict (an interrupted `verify` of a damaged store said it). Writers still say it.
    @Test func aReadingCommandsStopSaysNothingChangedAndAWritersSaysTheStoreIsConsistent() {
        for command in ["verify", "dump", "search", "copy", "watch", "rejects"] {
            #expect(InterruptedError(command: command).outcome == "nothing was changed")
        }
        #expect(InterruptedError.load(committed: 3).outcome == "the store is consistent")
        #expect(InterruptedError(command: "fetch nyt", writes: true).outcome == "the store is consistent")
    }
}
