#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The measured figures of one case.
struct BenchmarkResult {
    let name: String
    let group: String
    let isBaseline: Bool
    let records: Int
    /// Sample durations in seconds, sorted.
    let samples: [Double]
    let bytesPerRecord: Double?
    /// The process's peak resident memory (`ru_maxrss`) after this case, in bytes.
    let peakMemoryBytes: Int
    /// The case's note after its last sample.
    let note: String?

    var median: Double {
        let count = samples.count
        return count % 2 == 1 ? samples[count / 2] : (samples[count / 2 - 1] + samples[count / 2]) / 2
    }
    var minimum: Double { samples.first ?? 0 }
    var maximum: Double { samples.last ?? 0 }
    var recordsPerSecond: Double { median > 0 ? Double(records) / median : 0 }
    /// Megabytes (10^6) a second of this case's format, when its size is known.
    var megabytesPerSecond: Double? { bytesPerRecord.map { $0 * recordsPerSecond / 1_000_000 } }
}

/// Runs each case: setUp, one discarded warm-up, `samples` timed runs, tearDown.
struct BenchmarkRunner {
    let samples: Int
    /// Called after each case (for live progress on stdout).
    var onResult: (BenchmarkResult) -> Void = { _ in }

    func run(_ benchmark: any Benchmark) throws -> BenchmarkResult {
        try runInterleaved([benchmark])[0]
    }

    /// Runs `benchmarks` side by side: all set up, then each sample (the warm-up first) of each
    /// case in turn, so that when the machine slows down or speeds up during the run (a shared
    /// two-core machine drifts by up to 1.5×), every case of a group sees the same drift and
    /// their ratio keeps only their own difference. One case alone is the plain run.
    func runInterleaved(_ benchmarks: [any Benchmark]) throws -> [BenchmarkResult] {
        let clock = ContinuousClock()
        var started: [any Benchmark] = []
        defer { for benchmark in started.reversed() { benchmark.tearDown() } }
        for benchmark in benchmarks {
            try benchmark.setUp()
            started.append(benchmark)
        }
        var durations = [[Double]](repeating: [], count: benchmarks.count)
        var expected = [Int?](repeating: nil, count: benchmarks.count)
        for sample in 0...samples {
            for (i, benchmark) in benchmarks.enumerated() {
                try benchmark.prepareSample()
                let start = clock.now
                let consumed = try benchmark.run()
                let elapsed = clock.now - start
                try benchmark.finishSample()
                // The same work must give the same result every time; a change means a broken case.
                if let before = expected[i], before != consumed {
                    throw BenchError("\(benchmark.name): result changed between samples (\(before) → \(consumed))")
                }
                expected[i] = consumed
                if sample > 0 { durations[i].append(Self.seconds(elapsed)) }
            }
        }
        return zip(benchmarks, durations).map { benchmark, durations in
            let result = BenchmarkResult(
                name: benchmark.name, group: benchmark.group, isBaseline: benchmark.isBaseline,
                records: benchmark.records, samples: durations.sorted(), bytesPerRecord: benchmark.bytesPerRecord,
                peakMemoryBytes: Self.peakMemoryBytes(), note: benchmark.note)
            onResult(result)
            return result
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }

    /// The high-water mark of resident memory so far (Linux reports `ru_maxrss` in KiB).
    static func peakMemoryBytes() -> Int {
        var usage = rusage()
        #if os(Linux)
            guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
            return usage.ru_maxrss * 1024
        #else
            guard getrusage(RUSAGE_SELF, &usage) == 0 else { return 0 }
            return usage.ru_maxrss
        #endif
    }
}
