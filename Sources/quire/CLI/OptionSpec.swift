/// One named option of a command, as declared in the command's definition.
///
/// Options are kebab-case long names (`--max-pages`), optionally with a one-letter short form
/// (`-h`). A value option accepts both `--name value` and `--name=value`.
struct OptionSpec: Sendable {
    /// What the option takes after its name.
    enum Kind: Sendable {
        /// A switch with no value (`--compact`).
        case flag
        /// One value; given twice, the last one wins (`--limit 10`).
        case value(placeholder: String)
        /// A value that may be given several times, each adding one (`--category 1 --category 2`).
        case repeated(placeholder: String)
    }

    /// The long name without its leading dashes.
    let name: String
    /// The one-letter short form, without its dash.
    let short: Character?
    let kind: Kind
    /// One line (or a short paragraph) for the help text.
    let help: String
    /// The default shown in the help text, if any.
    let defaultDescription: String?
    /// Whether the command cannot run without it (shown without brackets in the usage line).
    let isRequired: Bool
    /// The values it takes, when they are a fixed few (for shell completion).
    var choices: [String] = []

    init(
        _ name: String, short: Character? = nil, kind: Kind, help: String, defaultDescription: String? = nil,
        isRequired: Bool = false
    ) {
        self.isRequired = isRequired
        self.name = name
        self.short = short
        self.kind = kind
        self.help = help
        self.defaultDescription = defaultDescription
    }

    static func flag(_ name: String, short: Character? = nil, help: String) -> OptionSpec {
        OptionSpec(name, short: short, kind: .flag, help: help)
    }

    static func value(
        _ name: String, _ placeholder: String, short: Character? = nil, help: String, default: String? = nil,
        choices: [String] = []
    ) -> OptionSpec {
        var option = OptionSpec(
            name, short: short, kind: .value(placeholder: placeholder), help: help, defaultDescription: `default`)
        option.choices = choices
        return option
    }

    static func required(_ name: String, _ placeholder: String, help: String) -> OptionSpec {
        OptionSpec(name, kind: .value(placeholder: placeholder), help: help, isRequired: true)
    }

    static func repeated(_ name: String, _ placeholder: String, help: String) -> OptionSpec {
        OptionSpec(name, kind: .repeated(placeholder: placeholder), help: help)
    }

    /// Values of options whose name mentions a key are secrets: they are never echoed, not even in
    /// a usage error.
    var isSecret: Bool { name.lowercased().contains("key") }

    var takesValue: Bool {
        if case .flag = kind { return false }
        return true
    }

    var placeholder: String? {
        switch kind {
        case .flag: nil
        case .value(let placeholder), .repeated(let placeholder): placeholder
        }
    }

    /// `--name <placeholder>` as shown in usage lines and help.
    var synopsis: String {
        guard let placeholder else { return "--\(name)" }
        return "--\(name) <\(placeholder)>"
    }
}

/// A positional argument of a command (`quire get <id>`).
struct ArgumentSpec: Sendable {
    let name: String
    let help: String
    let isOptional: Bool
    /// The values it takes, when they are a fixed few (for shell completion).
    let choices: [String]

    init(_ name: String, help: String, isOptional: Bool = false, choices: [String] = []) {
        self.name = name
        self.help = help
        self.isOptional = isOptional
        self.choices = choices
    }
}
