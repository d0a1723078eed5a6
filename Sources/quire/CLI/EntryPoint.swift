#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

import Quire
import QuireCodec
import QuireLMDB

/// Parses the command line, runs the command, and maps every outcome to output and an exit status.
enum EntryPoint {
    static func run(arguments: [String], environment: [String: String]) async -> Int32 {
        let outcome: CommandLineParser.Outcome
        do {
            outcome = try CommandTable.parser.parse(arguments)
        } catch {
            return usageFailure(error)
        }

        let output = OutputWriter()
        switch outcome {
        case .version:
            return finish(output) { () throws(OutputError) in try output.line("quire \(CommandTable.version)") }
        case .help(let path, let spec):
            return finish(output) { () throws(OutputError) in try output.write(CommandTable.help.help(for: spec, path: path)) }
        case .missingSubcommand(let path, let spec):
            Diagnostics.write(CommandTable.help.help(for: spec, path: path))
            if !path.isEmpty {
                Diagnostics.error("\(path.joined(separator: " ")): missing subcommand")
            }
            return ExitStatus.usage
        case .run(let parsed):
            guard let type = CommandTable.commands[parsed.commandPath] else {
                return usageFailure(UsageError(command: parsed.commandName, message: "unknown command"))
            }
            let command: any CommandOptions
            let global: GlobalOptions
            do {
                global = try GlobalOptions(parsing: parsed, environment: environment)
                command = try type.init(parsing: parsed)
            } catch {
                return usageFailure(error)
            }
            let context = CommandContext(output: output, global: global, environment: environment)
            if parsed.flag("json") { InterruptFlag.answerJSONOnWaitStop() }
            do {
                try await command.run(context)
                try output.flush()
                return ExitStatus.success
            } catch {
                // Data written before a failure still goes out; a closed pipe ends quietly.
                let flushed = Result { () throws(OutputError) in try output.flush() }
                let status = report(error, command: parsed.commandName, flushFailed: (try? flushed.get()) == nil)
                // A script reading `--json` gets an answer to every failure, not an empty stdout.
                if parsed.flag("json"), !output.hasOutput, status != ExitStatus.success, let message = Diagnostics.lastError {
                    try? output.line(JSONSummary.object([("error", .string(message))]))
                    try? output.flush()
                }
                return status
            }
        }
    }

    /// Writes through `body`, flushes, and maps output errors to a status.
    private static func finish(_ output: OutputWriter, _ body: () throws(OutputError) -> Void) -> Int32 {
        do {
            try body()
            try output.flush()
            return ExitStatus.success
        } catch {
            return report(error, command: "", flushFailed: true)
        }
    }

    private static func usageFailure(_ error: UsageError) -> Int32 {
        Diagnostics.error(error.description)
        Diagnostics.write(error.hint + "\n")
        return ExitStatus.usage
    }

    private static func report(_ error: any Error, command: String, flushFailed: Bool) -> Int32 {
        let prefix = command.isEmpty ? "" : "\(command): "
        /// Says "the store is corrupted" without "run quire verify" when that is the command.
        func corruptionMessage() -> String {
            command == "verify" ? "the store is corrupted" : StoreError.corruptionMessage
        }
        switch error {
        case OutputError.brokenPipe:
            // `quire dump | head -1`: the reader has all it wanted.
            return ExitStatus.success
        case OutputError.interrupted:
            // The output waited for a reader that stopped reading; nothing of the store is at stake.
            Diagnostics.error("\(prefix)interrupted while the output waited for its reader")
            return ExitStatus.interrupted
        case OutputError.failed(let code):
            Diagnostics.error("\(prefix)cannot write to stdout: \(errorString(code))")
            return ExitStatus.failure
        case let error as RuntimeError:
            Diagnostics.error(error.description.replacing(StoreError.corruptionMessage, with: corruptionMessage()))
            return ExitStatus.failure
        case let error as UsageError:
            return usageFailure(error)
        case let error as LMDBError where error.isCorruption:
            let reason = OpenStore.reason(error).replacing(StoreError.corruptionMessage, with: corruptionMessage())
            Diagnostics.error("\(prefix)\(error.path.map { "\($0): " } ?? "")\(reason)")
            return ExitStatus.failure
        case let error as CompactDecodingError:
            // Stored records are checked as they are read: damage never prints as other data.
            Diagnostics.error("\(prefix)\(corruptionMessage()) (a record does not decode: \(error))")
            return ExitStatus.failure
        case let error as InterruptedError:
            let detail = error.detail.map { " \($0)" } ?? ""
            Diagnostics.error("\(error.command): interrupted\(detail); \(error.outcome)")
            return ExitStatus.interrupted
        default:
            let message = String(describing: error).replacing(StoreError.corruptionMessage, with: corruptionMessage())
            Diagnostics.error("\(prefix)\(message)")
            return ExitStatus.failure
        }
    }
}

/// `strerror(3)` as a Swift string.
func errorString(_ code: Int32) -> String {
    String(cString: strerror(code))
}
