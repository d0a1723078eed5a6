import Foundation

/// Renders a command's help text in swift-argument-parser's layout:
/// OVERVIEW, USAGE, ARGUMENTS, OPTIONS, SUBCOMMANDS, then the discussion.
struct HelpFormatter: Sendable {
    let toolName: String
    let globalOptions: [OptionSpec]
    /// The column where descriptions start.
    var labelWidth = 28

    func help(for spec: CommandSpec, path: [String]) -> String {
        var out = "OVERVIEW: \(spec.abstract)\n\n"
        out += "USAGE: \(usage(for: spec, path: path))\n"

        if !spec.arguments.isEmpty {
            out += "\nARGUMENTS:\n"
            for argument in spec.arguments { out += row("<\(argument.name)>", argument.help) }
        }

        var options = spec.options
        if spec.subcommands.isEmpty || path.isEmpty { options += globalOptions }
        options.append(CommandLineParser.helpOption)
        if path.isEmpty { options.append(CommandLineParser.versionOption) }
        out += "\nOPTIONS:\n"
        for option in options {
            var label = option.short.map { "-\($0), " } ?? ""
            label += option.synopsis
            var text = option.help
            if let defaultDescription = option.defaultDescription { text += " (default: \(defaultDescription))" }
            if case .repeated = option.kind { text += " (repeatable)" }
            out += row(label, text)
        }

        if !spec.subcommands.isEmpty {
            out += path.isEmpty ? "\nCOMMANDS:\n" : "\nSUBCOMMANDS:\n"
            for subcommand in spec.subcommands { out += row(subcommand.name, subcommand.abstract) }
            let prefix = ([toolName] + path).joined(separator: " ")
            let placeholder = path.isEmpty ? "<command>" : "<subcommand>"
            out += "\n  See '\(prefix) \(placeholder) --help' for detailed help.\n"
        }

        if let discussion = spec.discussion { out += "\n\(discussion)\n" }
        return out
    }

    /// `quire dump [--format <format>] ...`
    func usage(for spec: CommandSpec, path: [String]) -> String {
        var parts = [toolName]
        if path.isEmpty {
            parts += globalOptions.map { "[\($0.synopsis)]" }
        }
        parts += path
        if !spec.subcommands.isEmpty {
            parts.append(path.isEmpty ? "<command>" : "<subcommand>")
            return parts.joined(separator: " ")
        }
        for argument in spec.arguments {
            parts.append(argument.isOptional ? "[<\(argument.name)>]" : "<\(argument.name)>")
        }
        for option in spec.options {
            var text = option.synopsis
            if case .repeated = option.kind { text += " ..." }
            parts.append(option.isRequired ? text : "[\(text)]")
        }
        return parts.joined(separator: " ")
    }

    private func row(_ label: String, _ text: String) -> String {
        let indented = "  " + label
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var out: String
        if indented.count + 2 > labelWidth {
            out = indented + "\n" + String(repeating: " ", count: labelWidth)
        } else {
            out = indented.padding(toLength: labelWidth, withPad: " ", startingAt: 0)
        }
        out += lines.joined(separator: "\n" + String(repeating: " ", count: labelWidth))
        return out + "\n"
    }
}
