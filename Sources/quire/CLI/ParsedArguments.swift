import Foundation

/// What the parser found on the command line for one command, before it becomes a typed options struct.
///
/// The typed accessors (`integer`, `date`, `choice`) throw ``UsageError`` with the option's name,
/// so every command reports bad values the same way.
struct ParsedArguments: Sendable {
    /// The command names from the top, e.g. `["fetch", "nyt"]`.
    let commandPath: [String]
    /// The values of value and repeated options, by long name, in command-line order.
    private(set) var values: [String: [String]] = [:]
    /// The flags that were given, by long name.
    private(set) var flags: Set<String> = []
    /// Positional arguments in order.
    private(set) var positionals: [String] = []
    /// The specs of the options this command accepts, by long name.
    let options: [String: OptionSpec]

    init(commandPath: [String], options: [OptionSpec]) {
        self.commandPath = commandPath
        self.options = Dictionary(options.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    var commandName: String { commandPath.joined(separator: " ") }

    mutating func add(value: String, for option: String) { values[option, default: []].append(value) }
    mutating func add(flag option: String) { flags.insert(option) }
    mutating func add(positional: String) { positionals.append(positional) }

    /// Whether a flag was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The last value given for an option, or nil.
    func value(_ name: String) -> String? { values[name]?.last }

    /// The last value given for an option that names something (a section, a collection);
    /// an empty one is a usage error, not a filter that matches nothing.
    func name(_ name: String) throws(UsageError) -> String? {
        guard let value = value(name) else { return nil }
        if value.isEmpty { throw invalid(name, value, "it is empty") }
        return value
    }

    /// Every value given for a repeated option, in order.
    func allValues(_ name: String) -> [String] { values[name] ?? [] }

    /// A usage error about one option's value; the value is left out when the option is a secret.
    func invalid(_ name: String, _ value: String, _ why: String) -> UsageError {
        if options[name]?.isSecret == true {
            return UsageError(command: commandName, message: "invalid value for '--\(name)': \(why)")
        }
        return UsageError(command: commandName, message: "invalid value '\(value)' for '--\(name)': \(why)")
    }

    /// A required value option; missing means a usage error.
    func required(_ name: String) throws(UsageError) -> String {
        guard let value = value(name) else {
            throw UsageError(command: commandName, message: "missing required option '--\(name)'")
        }
        return value
    }

    /// An integer option within `range`, or nil when absent.
    func integer(_ name: String, in range: ClosedRange<Int> = 0...Int.max) throws(UsageError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text) else {
            let digits = !text.isEmpty && text.drop { $0 == "-" }.allSatisfy { $0.isASCII && $0.isNumber }
            throw invalid(name, text, digits ? "out of range" : "expected a whole number")
        }
        guard range.contains(number) else {
            let bound = range.upperBound == Int.max ? "at least \(range.lowerBound)" : "between \(range.lowerBound) and \(range.upperBound)"
            throw invalid(name, text, "must be \(bound)")
        }
        return number
    }

    /// A date option (`YYYY-MM-DD` or `YYYYMMDD`, UTC midnight), or nil when absent.
    func date(_ name: String) throws(UsageError) -> Date? {
        guard let text = value(name) else { return nil }
        guard let date = CommandLineDate.parse(text) else {
            throw invalid(name, text, "expected a date as YYYY-MM-DD or YYYYMMDD")
        }
        return date
    }

    /// An option whose value must be one of an enum's raw values, or nil when absent.
    func choice<T: RawRepresentable & CaseIterable>(_ name: String, as type: T.Type) throws(UsageError) -> T?
    where T.RawValue == String {
        guard let text = value(name) else { return nil }
        guard let choice = T(rawValue: text) else {
            let allowed = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw invalid(name, text, "expected one of \(allowed)")
        }
        return choice
    }

    /// An `http` or `https` URL option, or nil when absent.
    func url(_ name: String) throws(UsageError) -> URL? {
        guard let text = value(name) else { return nil }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host?.isEmpty == false
        else {
            // Not echoed when it may hold a user and password (`htps://user:pw@proxy/`).
            guard !text.contains("@") else {
                throw UsageError(
                    command: commandName,
                    message: "invalid value for '--\(name)': expected an http or https URL (not shown: it names a user)")
            }
            throw invalid(name, text, "expected an http or https URL")
        }
        // A base URL's query or fragment was dropped without a word (a proxy's `?token=…`).
        guard url.query == nil, url.fragment == nil else {
            // Not echoed: a query is where a proxy's token would be.
            throw UsageError(
                command: commandName,
                message: "invalid value for '--\(name)': a base URL takes no query or fragment (they would be dropped from every request)")
        }
        return url
    }

    /// The one positional argument `name`; missing means a usage error.
    func requiredPositional(_ index: Int, _ name: String) throws(UsageError) -> String {
        guard index < positionals.count else {
            throw UsageError(command: commandName, message: "missing argument <\(name)>")
        }
        return positionals[index]
    }
}
