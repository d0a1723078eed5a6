import Quire

/// What `quire verify` does, given valid options (see `VerifyOptions.swift`).
enum VerifyCommand {
    static func run(_ options: VerifyOptions, context: CommandContext) async throws {
        FaultHandler.setContext(.verifying)
        let store = try OpenStore.readOnly(context.storePath, command: "verify")
        defer { store.close() }
        let progress = context.progress("verifying", quiet: options.quiet)
        var done = 0
        let report: VerificationReport
        do {
            report = try store.verify(
                progress: { checked in
                    progress.advance(by: checked - done)
                    done = checked
                }, isCancelled: { context.isInterrupted }, reading: { FaultHandler.setDetail($0) })
        } catch {
            progress.finish(stopped: true)
            if error.code == .cancelled {
                // A script reading --json learns the check did not finish (no verdict either way).
                if options.json { try? context.output.line(JSONSummary.object([("ok", .null), ("interrupted", .bool(true))])) }
                throw InterruptedError(command: "verify", detail: "before it checked everything (no verdict: run it to the end)")
            }
            throw error
        }
        progress.finish()
        if options.json {
            try context.output.line(
                JSONSummary.object([
                    ("ok", .bool(report.isSound)), ("records", .int(report.records)),
                    ("index_entries", .int(report.indexEntries)), ("relation_entries", .int(report.relationEntries)),
                    ("problems", .strings(report.problems)),
                ]))
        } else {
            // Problems name record keys: text from outside, inert on a terminal.
            for problem in report.problems { try context.output.line(TerminalText.escaped(problem)) }
        }
        let summary =
            "\(report.records) records, \(report.indexEntries) index entries, \(report.relationEntries) relation entries"
        guard report.isSound else {
            let count = report.problems.count
            throw RuntimeError("verify", "\(count) problem\(count == 1 ? "" : "s") found (\(summary))")
        }
        if !options.quiet && !options.json { try context.output.line("ok: \(summary)") }
    }
}
