import Foundation

/// Writes a run's results: the table on stdout, the JSON file, the SVG chart.
enum Report {
    // MARK: Table

    static let header = [
        "case", "records", "median s", "min–max s", "records/s", "MB/s", "B/record", "peak MB", "vs baseline",
    ]

    static func tableRow(_ result: BenchmarkResult, all results: [BenchmarkResult]) -> [String] {
        let ratio: String
        if result.isBaseline {
            ratio = "baseline"
        } else if let baseline = Ratios.baseline(of: result.group, in: results), baseline.recordsPerSecond > 0 {
            ratio = fixed(result.recordsPerSecond / baseline.recordsPerSecond, 2) + "× " + baseline.name
        } else {
            ratio = "-"
        }
        return [
            result.name, "\(result.records)", fixed(result.median, 3),
            fixed(result.minimum, 3) + "–" + fixed(result.maximum, 3), compact(result.recordsPerSecond),
            result.megabytesPerSecond.map { fixed($0, 1) } ?? "-", result.bytesPerRecord.map { fixed($0, 0) } ?? "-",
            fixed(Double(result.peakMemoryBytes) / 1_000_000, 0), ratio,
        ]
    }

    static func table(_ results: [BenchmarkResult]) -> String {
        let rows = [header] + results.map { tableRow($0, all: results) }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        var out = ""
        for (index, row) in rows.enumerated() {
            let cells = row.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                // Names and ratios read left-aligned, numbers right-aligned.
                if column == row.count - 1 { return cell }
                return column == 0 ? cell + pad : pad + cell
            }
            out += cells.joined(separator: "  ") + "\n"
            if index == 0 { out += widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n" }
        }
        let notes = results.compactMap { result in result.note.map { "  \(result.name): \($0)" } }
        if !notes.isEmpty { out += "\nnotes:\n" + notes.joined(separator: "\n") + "\n" }
        return out
    }

    static func ratioLines(_ ratios: [Ratio]) -> String {
        ratios.map { ratio in
            let verb = ratio.isSize ? "the size of" : "the speed of"
            return "  \(ratio.subject) is \(fixed(ratio.value, 2))× \(verb) \(ratio.reference)"
        }.joined(separator: "\n")
    }

    // MARK: JSON

    struct JSONResult: Codable {
        let name: String
        let group: String
        let records: Int
        let secondsMedian: Double
        let secondsMin: Double
        let secondsMax: Double
        let recordsPerS: Double
        let bytesPerRecord: Double?
        let peakMemoryBytes: Int
        let note: String?

        enum CodingKeys: String, CodingKey {
            case name, group, records
            case secondsMedian = "seconds_median"
            case secondsMin = "seconds_min"
            case secondsMax = "seconds_max"
            case recordsPerS = "records_per_s"
            case bytesPerRecord = "bytes_per_record"
            case peakMemoryBytes = "peak_memory_bytes"
            case note
        }
    }

    struct JSONReport: Codable {
        let machine: MachineInfo
        let results: [JSONResult]
        let ratios: [String: Double]
    }

    static func json(_ results: [BenchmarkResult], ratios: [Ratio]) throws -> Data {
        let report = JSONReport(
            machine: .current,
            results: results.map {
                JSONResult(
                    name: $0.name, group: $0.group, records: $0.records, secondsMedian: $0.median,
                    secondsMin: $0.minimum, secondsMax: $0.maximum, recordsPerS: $0.recordsPerSecond,
                    bytesPerRecord: $0.bytesPerRecord, peakMemoryBytes: $0.peakMemoryBytes,
                    note: $0.note)
            },
            ratios: Dictionary(ratios.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first }))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(report)
    }

    // MARK: Numbers

    static func fixed(_ value: Double, _ decimals: Int) -> String {
        String(format: "%.\(decimals)f", value)
    }

    /// `1234567` → `1.23M`.
    static func compact(_ value: Double) -> String {
        switch value {
        case 1_000_000...: fixed(value / 1_000_000, 2) + "M"
        case 1_000...: fixed(value / 1_000, 1) + "k"
        default: fixed(value, 0)
        }
    }
}
