/// One comparison between two results of a run.
struct Ratio {
    /// `subject/reference` for speed, `bytes:subject/reference` for size.
    let key: String
    let subject: String
    let reference: String
    /// Records/s of the subject over the reference's (speed), or bytes per record over the
    /// reference's (size). Above 1 means faster (or bigger).
    let value: Double
    let isSize: Bool
}

enum Ratios {
    /// Each case over its group's baseline, then the registry's extra and size comparisons,
    /// skipping any whose cases did not run.
    static func compute(_ results: [BenchmarkResult]) -> [Ratio] {
        let byName = Dictionary(results.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var ratios: [Ratio] = []
        var seen: Set<String> = []
        func speed(_ subject: String, _ reference: String) {
            let key = "\(subject)/\(reference)"
            guard !seen.contains(key), let s = byName[subject], let r = byName[reference], r.recordsPerSecond > 0
            else { return }
            seen.insert(key)
            ratios.append(
                Ratio(key: key, subject: subject, reference: reference, value: s.recordsPerSecond / r.recordsPerSecond,
                    isSize: false))
        }
        for result in results where !result.isBaseline {
            if let baseline = baseline(of: result.group, in: results) { speed(result.name, baseline.name) }
        }
        for (subject, reference) in Registry.extraComparisons { speed(subject, reference) }
        for (subject, reference) in Registry.sizeComparisons {
            guard let s = byName[subject]?.bytesPerRecord, let r = byName[reference]?.bytesPerRecord, r > 0 else {
                continue
            }
            ratios.append(
                Ratio(key: "bytes:\(subject)/\(reference)", subject: subject, reference: reference, value: s / r,
                    isSize: true))
        }
        return ratios
    }

    static func baseline(of group: String, in results: [BenchmarkResult]) -> BenchmarkResult? {
        results.first { $0.group == group && $0.isBaseline }
    }
}
