/// The command line of `quire-bench`.
struct BenchOptions {
    var records: Int?
    /// Articles in the load cases' JSON Lines file (they generate it, not from the corpus).
    var loadRecords: Int?
    var samples: Int?
    var filters: [String] = []
    var quick = false
    var jsonPath: String?
    var chartPath: String?
    var list = false
    /// Run the cases of each group sample by sample in turn (see `BenchmarkRunner.runInterleaved`).
    var interleave = false

    static let defaultRecords = 100_000
    static let quickRecords = 10_000
    static let defaultSamples = 5
    static let quickSamples = 3

    var effectiveRecords: Int { records ?? (quick ? Self.quickRecords : Self.defaultRecords) }
    var effectiveLoadRecords: Int { loadRecords ?? effectiveRecords }
    var effectiveSamples: Int { samples ?? (quick ? Self.quickSamples : Self.defaultSamples) }

    static let usage = """
        USAGE: quire-bench [--records N] [--load-records N] [--samples N] [--filter SUBSTRING ...] [--quick]
                           [--interleave] [--json FILE] [--chart FILE] [--list]

        OPTIONS:
          --records N          Records per case (default: \(defaultRecords); --quick: \(quickRecords)).
          --load-records N     Articles in the load cases' generated JSON Lines file (default: --records);
                               they stream it to a temporary file, so 1000000 needs no corpus of that size.
          --samples N          Timed samples per case after one warm-up (default: \(defaultSamples); --quick: \(quickSamples)).
          --filter SUBSTRING   Run only cases whose name contains it (repeatable; any match runs);
                               a trailing $ asks for the whole name (load.quire.jsonl$, not its reloads).
          --quick              Fewer records and samples: a run in under a minute.
          --interleave         Run the cases of a group in turns, a sample of each, so that a ratio's two
                               sides share the machine's drift (all of a group's cases are set up at once).
          --json FILE          Write machine-readable results (schema in Benchmarks/README.md).
          --chart FILE         Write an SVG bar chart of the ratios.
          --list               List the case names (those the filters select) and exit.

        quire-bench --scale [--sizes N,N,...] [--search] [--scale-chart FILE] [--scale-json FILE]
          How bulk insert, point gets, scans and verify grow with the store (default sizes
          100000,1000000,10000000; 10M takes about ten minutes and some 15 GB of temporary disk).
          --search gives the articles their full-text index too, as the product declares them.
          -h, --help           Show this help.

        Build in release mode for meaningful figures: swift run -c release quire-bench
        """

    enum ParseResult {
        case run(BenchOptions)
        case help
    }

    static func parse(_ arguments: [String]) throws -> ParseResult {
        var options = BenchOptions()
        var iterator = arguments.makeIterator()
        func value(_ name: String, inline: String?) throws -> String {
            if let inline { return inline }
            guard let next = iterator.next() else { throw BenchError("missing value for '\(name)'") }
            return next
        }
        func positive(_ name: String, _ text: String) throws -> Int {
            guard let number = Int(text), number > 0 else {
                throw BenchError("invalid value '\(text)' for '\(name)': expected a positive whole number")
            }
            return number
        }
        while let argument = iterator.next() {
            var name = argument
            var inline: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            switch name {
            case "--records": options.records = try positive(name, value(name, inline: inline))
            case "--load-records": options.loadRecords = try positive(name, value(name, inline: inline))
            case "--samples": options.samples = try positive(name, value(name, inline: inline))
            case "--filter": options.filters.append(try value(name, inline: inline))
            case "--json": options.jsonPath = try value(name, inline: inline)
            case "--chart": options.chartPath = try value(name, inline: inline)
            case "--quick": options.quick = true
            case "--interleave": options.interleave = true
            case "--list": options.list = true
            case "-h", "--help": return .help
            default: throw BenchError("unknown argument '\(name)'")
            }
        }
        return .run(options)
    }

    func selects(_ name: String) -> Bool {
        filters.isEmpty || filters.contains { $0.hasSuffix("$") ? name == $0.dropLast() : name.contains($0) }
    }
}
