import Foundation
@testable import Quire
import QuireFixtures
import Testing

@testable import quire
import QuireTestSupport

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct ProgressStyleTests {
    @Test func plainLinesOffATerminalAndWithDumbTerminals() {
        #expect(ProgressReporter.Style.automatic(quiet: false, isTerminal: true, environment: ["TERM": "xterm"]) == .bar)
        #expect(ProgressReporter.Style.automatic(quiet: false, isTerminal: true, environment: ["TERM": "dumb"]) == .lines)
        #expect(ProgressReporter.Style.automatic(quiet: false, isTerminal: false, environment: [:]) == .lines)
        #expect(ProgressReporter.Style.automatic(quiet: true, isTerminal: true, environment: [:]) == .quiet)
    }

    @Test(arguments: [true, false]) func noColorDrawsTheBarWithoutEscapes(_ escapes: Bool) {
        let lines = Lines()
        let bar = ProgressReporter(label: "x", total: 100, style: .bar, usesEscapes: escapes) { lines.append($0) }
        for _ in 0..<3 {
            usleep(120_000)
            bar.advance(by: 10)
        }
        bar.finish()
        #expect(lines.all.count >= 3)
        #expect(lines.all.contains { $0.contains("\u{1B}") } == escapes)
        #expect(lines.all.last?.hasSuffix("\n") == true)
    }
}

@Suite struct LoadProgressTests {
    /// A load's end (the merge of its sorted runs, the full-text index's packing) is drawn as
    /// stages of their own, at once, not as a count standing still at the total.
    @Test func theLoadsEndShowsItsStages() {
        let lines = Lines()
        let progress = ProgressReporter(label: "loading", style: .lines) { lines.append($0) }
        progress.show(BulkInsertProgress(records: 0, chunks: 0, elapsed: 0, pending: 300))
        progress.show(BulkInsertProgress(records: 0, chunks: 0, elapsed: 1, pending: 300, phase: .mergingSortedRuns))
        progress.show(BulkInsertProgress(records: 100, chunks: 1, elapsed: 2, pending: 200, phase: .mergingSortedRuns))
        progress.show(BulkInsertProgress(records: 300, chunks: 3, elapsed: 3, pending: 0, phase: .compactingSearchIndex))
        progress.finish()
        // From the merge on (a thread held back two seconds before it could draw the first line).
        let all = Array(lines.all.drop { !$0.contains(", merging") })
        #expect(all.count == 3, "\(all)")
        #expect(all.first?.hasPrefix("quire: loading, merging sorted runs: 0/300 records") == true, "\(all)")
        #expect(all.dropFirst().first == "quire: loading, packing the full-text index: 300 records\n", "\(all)")
        #expect(all.last?.hasPrefix("quire: loading: 300 records, ") == true && all.last?.contains("done in") == true, "\(all)")
    }
}

@Suite struct CompletionAndManPageTests {
    /// Runs bash's completion function for the words typed so far and returns its candidates.
    func complete(_ script: URL, _ words: [String]) throws -> [String] {
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let program = "source '\(script.path)'; COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _quire; printf '%s\\n' \"${COMPREPLY[@]}\""
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["--norc", "-c", program]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.currentDirectoryURL = script.deletingLastPathComponent()
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return lines(String(decoding: data, as: UTF8.self))
    }

    @Test func bashCompletesCommandsSubcommandsAndOptions() async throws {
        try await withScratch { dir in
            let result = try await runQuire(["completions", "bash"])
            try #require(result.status == 0, "\(result)")
            let script = dir.appendingPathComponent("quire.bash")
            try Data(result.stdout.utf8).write(to: script)
            let commands = try complete(script, ["quire", ""])
            for name in ["demo", "dump", "get", "serve", "completions", "manpage", "help", "fetch"] {
                #expect(commands.contains(name), "\(name) in \(commands)")
            }
            #expect(Set(try complete(script, ["quire", "fetch", ""])).isSuperset(of: ["nyt", "feedzilla"]))
            #expect(try complete(script, ["quire", "dump", "--f"]) == ["--format"])
            #expect(try complete(script, ["quire", "fetch", "nyt", "--be"]) == ["--begin"])
            #expect(try complete(script, ["quire", "--store", "x.db", "se"]) == ["search", "serve"])
            #expect(try complete(script, ["quire", "serve", "--p"]) == ["--port"])
            // Values from a fixed few complete as those, arguments too.
            #expect(Set(try complete(script, ["quire", "dump", "--format", ""])).isSuperset(of: ["jsonl", "json", "table", "mdb"]))
            #expect(try complete(script, ["quire", "search", "x", "--sort", "rel"]) == ["relevance"])
            #expect(Set(try complete(script, ["quire", "completions", ""])).isSuperset(of: ["bash", "zsh", "fish"]))
            // An option's values are those of the command it follows; an option's value is not a command.
            #expect(try complete(script, ["quire", "get", "x", "--format", ""]) == ["json", "table"])
            #expect(try complete(script, ["quire", "search", "x", "--format", ""]) == ["jsonl", "table"])
            #expect(try complete(script, ["quire", "--store", "dump", "get", "--f"]) == ["--format"])
            // Files for load's argument, command names for help.
            #expect(try complete(script, ["quire", "load", ""]).contains("quire.bash"))
            #expect(Set(try complete(script, ["quire", "help", ""])).isSuperset(of: ["fetch", "dump", "serve"]))
            #expect(Set(try complete(script, ["quire", "help", "fetch", ""])) == ["nyt", "feedzilla"])
        }
    }

    @Test(arguments: ["zsh", "fish"]) func zshAndFishScriptsNameEveryCommandAndOption(_ shell: String) async throws {
        let result = try await runQuire(["completions", shell])
        try #require(result.status == 0, "\(result)")
        for name in CommandTable.commands.keys.flatMap({ $0 }) {
            #expect(result.stdout.contains(name), "\(shell): \(name)")
        }
        for option in ["since", "section", "port", "host", "json", "store"] {
            let spelled = shell == "fish" ? "-l \(option)" : "'--\(option)["
            #expect(result.stdout.contains(spelled), "\(shell): --\(option)")
        }
        // Short forms, repeatable options, the version, and help's topics, as --help has them.
        let expected =
            shell == "fish"
            ? ["-l quiet -s q", "-l version", "__fish_seen_subcommand_from help; and __fish_seen_subcommand_from fetch' -a 'nyt feedzilla'"]
            : ["'(-q --quiet)'{-q,--quiet}'[", "'(-h --help)'{-h,--help}'[", "'*--category[", "'--version[", "'2:subcommand:->topic'", "fetch) compadd nyt feedzilla ;;"]
        for text in expected { #expect(result.stdout.contains(text), "\(shell): \(text)") }
        let bad = try await runQuire(["completions", "tcsh"])
        #expect(bad.status == 64 && bad.stderr.contains("unknown shell 'tcsh'"))
    }

    @Test func manPageRendersEveryCommand() async throws {
        let result = try await runQuire(["manpage"])
        try #require(result.status == 0, "\(result)")
        #expect(result.stdout.hasPrefix(".TH QUIRE 1"))
        #expect(result.stdout.contains("\\fB\\-\\-version\\fR") && result.stdout.contains("\\fB\\-h\\fR, \\fB\\-\\-help\\fR"))
        for path in CommandTable.commands.keys {
            #expect(result.stdout.contains(".SS quire \(path.joined(separator: " "))"), "\(path)")
        }
        // No text line may start with a control character except the macros written on purpose.
        let macros: Set<String> = [".TH", ".SH", ".SS", ".TP", ".PP", ".nf", ".fi", ".B", ".BR"]
        for line in lines(result.stdout) where line.hasPrefix(".") || line.hasPrefix("'") {
            #expect(macros.contains(String(line.split(separator: " ").first ?? "")), "stray control line: \(line)")
        }
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/groff") {
            let page = FileManager.default.temporaryDirectory.appendingPathComponent("quire-\(UUID().uuidString).1")
            try Data(result.stdout.utf8).write(to: page)
            defer { try? FileManager.default.removeItem(at: page) }
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/groff")
            process.arguments = ["-man", "-Tutf8", "-ww", "-z", page.path]
            let errors = Pipe()
            process.standardError = errors
            try process.run()
            let warnings = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0 && warnings.isEmpty, "\(warnings)")
        }
    }

    @Test func helpCommandIsTheCommandsHelp() async throws {
        for path in [["fetch", "nyt"], ["serve"], ["dump"], []] {
            let viaHelp = try await runQuire(["help"] + path)
            let viaFlag = try await runQuire(path + ["--help"])
            #expect(viaHelp.status == 0 && viaHelp.stdout == viaFlag.stdout && !viaHelp.stdout.isEmpty, "\(path)")
        }
        let unknown = try await runQuire(["help", "frobnicate"])
        #expect(unknown.status == 64 && unknown.stderr.contains("no command 'frobnicate'"), "\(unknown)")
    }
}

@Suite struct JSONSummaryTests {
    func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not JSON: \(text)")
    }

    @Test func loadVerifyAndStatsPrintOneJSONObject() async throws {
        try await withScratch { dir in
            let load = try await runQuire(["load", "-", "--json"], stdin: try generatedJSONL(count: 40), directory: dir)
            try #require(load.status == 0, "\(load)")
            let loaded = try object(load.stdout)
            #expect(loaded["records"] as? Int == 40 && loaded["seconds"] is Double)
            let verify = try await runQuire(["verify", "--json"], directory: dir)
            #expect(verify.status == 0, "\(verify)")
            let verified = try object(verify.stdout)
            #expect(verified["ok"] as? Bool == true && verified["records"] as? Int == 40)
            #expect((verified["problems"] as? [String])?.isEmpty == true)
            #expect(verified["index_entries"] as? Int ?? 0 > 0)
            let stats = try object(try await runQuire(["stats", "--json"], directory: dir).stdout)
            #expect(stats["collections"] is [[String: Any]])
        }
    }

    @Test func fetchPrintsItsSummaryAsJSON() async throws {
        var configuration = FixtureAPI.Configuration()
        configuration.feedzillaCategoryCount = 2
        configuration.feedzillaArticlesPerCategory = 7
        let api = try FixtureAPI(configuration: configuration)
        defer { api.stop() }
        try await withScratch { dir in
            let fetch = try await runQuire(["fetch", "feedzilla", "--base-url", api.baseURL, "--json"], directory: dir)
            try #require(fetch.status == 0, "\(fetch)")
            let summary = try object(fetch.stdout)
            let stored = lines(try await runQuire(["dump"], directory: dir).stdout).count
            #expect(stored > 0 && summary["stored"] as? Int == stored, "\(summary)")
            #expect(summary["new"] as? Int == stored && summary["rejected"] as? Int == 0)
            #expect(summary["complete"] as? Bool == true)
            #expect(!fetch.stderr.contains("stored \(stored)"), "the text summary is replaced, not doubled")
        }
    }
}
