import Foundation

#if canImport(Glibc)
    import Glibc
#endif

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("quire-bench: \(message)\n".utf8))
    exit(status)
}

ServeFixedBody.runIfAsked(Array(CommandLine.arguments.dropFirst()))  // scripts/bench-serve.sh's baseline
ScaleRun.runIfAsked(Array(CommandLine.arguments.dropFirst()))  // --scale: cost against store size

let options: BenchOptions
do {
    switch try BenchOptions.parse(Array(CommandLine.arguments.dropFirst())) {
    case .help:
        print(BenchOptions.usage)
        exit(0)
    case .run(let parsed):
        options = parsed
    }
} catch {
    fail("\(error)\nsee 'quire-bench --help'", status: 64)
}

#if DEBUG
    let banner = String(repeating: "=", count: 78)
    print(
        """
        \(banner)
        WARNING: quire-bench was built in DEBUG mode. These figures mean nothing.
        Run: swift run -c release quire-bench
        \(banner)
        """)
#endif

// Generating the corpus is cheap next to the cases; it is shared so every case sees the same data.
if options.list {
    do {
        for benchmark in Registry.all(corpus: try Corpus(count: 1), loadRecords: 1) where options.selects(benchmark.name) {
            print(benchmark.name)
        }
    } catch {
        fail("cannot generate the corpus: \(error)", status: 1)
    }
    exit(0)
}
let corpus: Corpus
do {
    corpus = try Corpus(count: options.effectiveRecords)
} catch {
    fail("cannot generate the corpus: \(error)", status: 1)
}
let cases = Registry.all(corpus: corpus, loadRecords: options.effectiveLoadRecords).filter { options.selects($0.name) }
guard !cases.isEmpty else { fail("no case matches \(options.filters)", status: 64) }

let machine = MachineInfo.current
print(
    "quire-bench: \(cases.count) cases, \(options.effectiveRecords) records, \(options.effectiveSamples) samples "
        + "(+1 warm-up), \(machine.cores) cores, \(machine.swiftBuildConfiguration) build")

var results: [BenchmarkResult] = []
let runner = BenchmarkRunner(samples: options.effectiveSamples) { result in
    print("  \(result.name): \(Report.compact(result.recordsPerSecond)) records/s (median \(Report.fixed(result.median, 3)) s)")
}
// With --interleave, the cases of a group run together (in the order of the group's first case).
var batches: [[any Benchmark]] = []
for benchmark in cases {
    if options.interleave, let i = batches.firstIndex(where: { $0[0].group == benchmark.group }) {
        batches[i].append(benchmark)
    } else {
        batches.append([benchmark])
    }
}
for batch in batches {
    do {
        results += try runner.runInterleaved(batch)
    } catch {
        corpus.cleanUp()
        JSONLinesInput.removeShared()
        fail("\(batch.map(\.name).joined(separator: ", ")): \(error)", status: 1)
    }
}
corpus.cleanUp()
JSONLinesInput.removeShared()

let ratios = Ratios.compute(results)
print("")
print(Report.table(results), terminator: "")
if !ratios.isEmpty {
    print("\nratios:")
    print(Report.ratioLines(ratios))
}

do {
    if let path = options.jsonPath {
        try Report.json(results, ratios: ratios).write(to: URL(fileURLWithPath: path))
        print("\nwrote \(path)")
    }
    if let path = options.chartPath {
        let title = "quire-bench ratios (\(options.effectiveRecords) records, \(machine.cores) cores, "
            + "\(machine.swiftBuildConfiguration))"
        try Data(RatioChart.svg(ratios, title: title).utf8).write(to: URL(fileURLWithPath: path))
        print("wrote \(path)")
    }
} catch {
    fail("cannot write the output: \(error)", status: 1)
}
