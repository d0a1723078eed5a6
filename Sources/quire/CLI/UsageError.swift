/// A mistake on the command line: unknown command or option, a missing or malformed value.
///
/// Reported as `quire: <command>: <message>` plus a hint to the command's help, with exit
/// status 64 (`EX_USAGE`).
struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The command path the error belongs to (`"dump"`, `"fetch nyt"`), empty at the top level.
    let command: String
    let message: String

    var description: String { command.isEmpty ? message : "\(command): \(message)" }

    /// The hint printed under the error.
    var hint: String {
        command.isEmpty ? "see 'quire --help'" : "see 'quire \(command) --help'"
    }
}

/// A failure while running a command (exit status 1), reported as `quire: <what>: <why>`.
struct RuntimeError: Error, Sendable, CustomStringConvertible {
    /// What failed: usually the command, a path or an id.
    let what: String
    let why: String

    init(_ what: String, _ why: String) {
        self.what = what
        self.why = why
    }

    var description: String { what.isEmpty ? why : "\(what): \(why)" }
}

/// The command stopped early because the user pressed Ctrl-C (or sent SIGTERM or SIGHUP): a
/// writing command's work done so far is committed and the store is consistent; a reading one
/// changed nothing. Exit status 130, like a shell.
struct InterruptedError: Error, Sendable {
    let command: String
    /// What it had done, when that is worth saying ("after its 1000 records were committed").
    var detail: String? = nil
    /// Whether the command writes to the store (load, fetch, remap, demo, node).
    var writes = false

    /// What the message says of the store: a reading command's "consistent" was taken for a
    /// verdict (an interrupted `verify` of a damaged store said it).
    var outcome: String { writes ? "the store is consistent" : "nothing was changed" }

    /// A load stopped with `committed` records committed, and saying so.
    static func load(committed: Int) -> InterruptedError {
        InterruptedError(
            command: "load",
            detail: committed == 0 ? "before any record was committed" : "after its \(committed) records were committed",
            writes: true)
    }
}
