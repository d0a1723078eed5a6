/// Parses `argv` against a tree of ``CommandSpec``s, the way swift-argument-parser does.
///
/// - Long options as `--name value` or `--name=value`; short flags as `-h`, or together as `-qh`.
/// - `--` ends the options; everything after it is positional. A lone `-` is positional (stdin).
/// - Global options (`--store`) are accepted before the command and after it.
/// - `-h`/`--help` anywhere asks for the help of the command named so far; `--version` only
///   before a command.
struct CommandLineParser: Sendable {
    /// What the user asked for.
    enum Outcome: Sendable {
        /// Run the leaf command with these arguments.
        case run(ParsedArguments)
        /// Print this command's help on stdout and exit 0.
        case help(path: [String], spec: CommandSpec)
        /// Print the version on stdout and exit 0.
        case version
        /// A command group was named without its subcommand (or nothing at all): print its help
        /// on stderr and exit 64.
        case missingSubcommand(path: [String], spec: CommandSpec)
    }

    let root: CommandSpec
    /// Options every command accepts, before or after its name.
    let globalOptions: [OptionSpec]

    static let helpOption = OptionSpec.flag("help", short: "h", help: "Show help information.")
    static let versionOption = OptionSpec.flag("version", help: "Show the version.")

    func parse(_ arguments: [String]) throws(UsageError) -> Outcome {
        var spec = root
        var path: [String] = []
        var parsed = ParsedArguments(commandPath: [], options: [])
        var pending: [(name: String, value: String?)] = []
        var positionals: [String] = []
        var index = arguments.startIndex
        var optionsEnded = false

        func known() -> [OptionSpec] {
            var options = spec.options + globalOptions + [Self.helpOption]
            if path.isEmpty { options.append(Self.versionOption) }
            return options
        }
        func error(_ message: String) -> UsageError {
            UsageError(command: path.joined(separator: " "), message: message)
        }

        while index < arguments.endIndex {
            let token = arguments[index]
            index += 1
            if !optionsEnded && token == "--" {
                optionsEnded = true
                continue
            }
            if !optionsEnded && token.hasPrefix("-") && token != "-" {
                let option: OptionSpec
                var inlineValue: String?
                if token.hasPrefix("--") {
                    let body = token.dropFirst(2)
                    let name: Substring
                    if let equals = body.firstIndex(of: "=") {
                        name = body[..<equals]
                        inlineValue = String(body[body.index(after: equals)...])
                    } else {
                        name = body
                    }
                    // Only the name is echoed: whatever follows `=` might be a secret.
                    guard let found = known().first(where: { $0.name == name }) else {
                        throw error("unknown option '--\(name)'")
                    }
                    option = found
                } else {
                    let letters = token.dropFirst()
                    // `-qh`: a cluster of flags, each as if given alone.
                    let flags = letters.compactMap { letter in known().first { $0.short == letter && !$0.takesValue } }
                    if letters.count > 1 && flags.count == letters.count {
                        if flags.contains(where: { $0.name == Self.helpOption.name }) { return .help(path: path, spec: spec) }
                        pending.append(contentsOf: flags.map { ($0.name, nil) })
                        continue
                    }
                    guard letters.count == 1, let found = known().first(where: { $0.short == letters.first }) else {
                        // `quire search '-rain storm'`: an argument, not options; `--` says so.
                        let hint =
                            spec.arguments.isEmpty
                            ? "" : " (an argument that starts with '-' goes after '--': quire \(path.joined(separator: " ")) -- '\(token.prefix(40))')"
                        let unknown = letters.first { letter in !flags.contains { $0.short == letter } } ?? letters.first
                        throw error("unknown option '-\(unknown.map(String.init) ?? "")'" + hint)
                    }
                    option = found
                }
                if option.name == Self.helpOption.name { return .help(path: path, spec: spec) }
                if option.name == Self.versionOption.name {
                    // `quire --version load` did not mean to load; say so rather than ignore it.
                    // Only an option's name is echoed: whatever follows `=` might be a secret.
                    guard index == arguments.endIndex else {
                        let next = arguments[index].hasPrefix("-") ? arguments[index].prefix { $0 != "=" } : arguments[index].prefix(40)
                        throw error("unexpected argument '\(next)' after '--version'")
                    }
                    return .version
                }
                if option.takesValue {
                    if inlineValue == nil {
                        // `--limit --format json` forgot the limit; it did not mean a limit of "--format".
                        guard index < arguments.endIndex, !arguments[index].hasPrefix("--") else {
                            throw error("missing value for '\(option.synopsis)'")
                        }
                        inlineValue = arguments[index]
                        index += 1
                    }
                    pending.append((option.name, inlineValue))
                } else {
                    guard inlineValue == nil else { throw error("option '--\(option.name)' takes no value") }
                    pending.append((option.name, nil))
                }
                continue
            }
            if !spec.subcommands.isEmpty {
                guard let next = spec.subcommand(named: token) else {
                    let kind = path.isEmpty ? "command" : "subcommand"
                    throw error("unknown \(kind) '\(token)'")
                }
                spec = next
                path.append(token)
                continue
            }
            positionals.append(token)
        }

        if !spec.subcommands.isEmpty { return .missingSubcommand(path: path, spec: spec) }

        parsed = ParsedArguments(commandPath: path, options: spec.options + globalOptions)
        for (name, value) in pending {
            if let value { parsed.add(value: value, for: name) } else { parsed.add(flag: name) }
        }
        if positionals.count > spec.arguments.count {
            throw error("unexpected argument '\(positionals[spec.arguments.count])'")
        }
        if let missing = spec.arguments.dropFirst(positionals.count).first(where: { !$0.isOptional }) {
            throw error("missing argument <\(missing.name)>")
        }
        for positional in positionals { parsed.add(positional: positional) }
        return .run(parsed)
    }
}
