/// The declaration of one command: its name, what it does, its options, arguments and subcommands.
///
/// A command with subcommands (`fetch`) only groups them; it is not run itself.
struct CommandSpec: Sendable {
    let name: String
    /// One line for the command list and the help's OVERVIEW.
    let abstract: String
    /// More text after the overview, if any (examples, environment variables).
    let discussion: String?
    let options: [OptionSpec]
    let arguments: [ArgumentSpec]
    let subcommands: [CommandSpec]

    init(
        name: String, abstract: String, discussion: String? = nil, options: [OptionSpec] = [],
        arguments: [ArgumentSpec] = [], subcommands: [CommandSpec] = []
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.options = options
        self.arguments = arguments
        self.subcommands = subcommands
    }

    func subcommand(named name: String) -> CommandSpec? {
        subcommands.first { $0.name == name }
    }
}
