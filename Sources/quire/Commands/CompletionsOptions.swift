/// `quire completions bash|zsh|fish`
struct CompletionsOptions: CommandOptions {
    var shell: CompletionShell

    static let spec = CommandSpec(
        name: "completions",
        abstract: "Print a shell completion script (bash, zsh or fish).",
        discussion: """
            Generated from the command definitions, so it always matches this binary.

            EXAMPLES:
              quire completions bash > /etc/bash_completion.d/quire
              quire completions zsh > "${fpath[1]}/_quire"
              quire completions fish > ~/.config/fish/completions/quire.fish
            """,
        arguments: [ArgumentSpec("shell", help: "bash, zsh or fish.", choices: CompletionShell.allCases.map(\.rawValue))])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        let name = try arguments.requiredPositional(0, "shell")
        guard let shell = CompletionShell(rawValue: name) else {
            throw UsageError(command: arguments.commandName, message: "unknown shell '\(name)' (use bash, zsh or fish)")
        }
        self.shell = shell
    }

    func run(_ context: CommandContext) async throws {
        let generator = ShellCompletions(root: CommandTable.root, globalOptions: GlobalOptions.all)
        try context.output.write(generator.script(for: shell))
    }
}

/// `quire manpage`
struct ManpageOptions: CommandOptions {
    static let spec = CommandSpec(
        name: "manpage",
        abstract: "Print the man page (roff), generated from the command definitions.",
        discussion: """
            EXAMPLES:
              quire manpage | man -l -
              quire manpage > /usr/local/share/man/man1/quire.1
            """)

    init(parsing arguments: ParsedArguments) throws(UsageError) {}

    func run(_ context: CommandContext) async throws {
        let page = ManPage(root: CommandTable.root, globalOptions: GlobalOptions.all, version: CommandTable.version)
        try context.output.write(page.render())
    }
}

/// `quire help [COMMAND [SUBCOMMAND]]`
struct HelpOptions: CommandOptions {
    var path: [String]

    static let spec = CommandSpec(
        name: "help",
        abstract: "Show the help of a command ('quire help fetch nyt' is 'quire fetch nyt --help').",
        arguments: [
            ArgumentSpec("command", help: "The command.", isOptional: true),
            ArgumentSpec("subcommand", help: "Its subcommand, for 'fetch'.", isOptional: true),
        ])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        path = arguments.positionals
        var spec = CommandTable.root
        for name in path {
            guard let next = spec.subcommand(named: name) else {
                let known = spec.subcommands.map(\.name).joined(separator: ", ")
                let what = path.joined(separator: " ")
                throw UsageError(
                    command: "help",
                    message: known.isEmpty ? "'\(spec.name)' has no subcommand ('\(what)')" : "no command '\(what)' (commands: \(known))")
            }
            spec = next
        }
    }

    func run(_ context: CommandContext) async throws {
        var spec = CommandTable.root
        for name in path { spec = spec.subcommand(named: name)! }
        try context.output.write(CommandTable.help.help(for: spec, path: path))
    }
}
