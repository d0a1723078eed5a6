import Foundation

/// One-line JSON objects for `--json` summaries, keys in the order given.
enum JSONSummary {
    enum Value {
        case int(Int)
        case double(Double)
        case bool(Bool)
        case strings([String])
        case string(String)
        case seconds(Duration)
        case null
    }

    static func object(_ fields: [(String, Value)]) -> String {
        "{" + fields.map { "\(string($0.0)):\(render($0.1))" }.joined(separator: ",") + "}"
    }

    private static func render(_ value: Value) -> String {
        switch value {
        case .int(let n): return String(n)
        case .double(let d): return d.isFinite ? String(format: "%.3f", d) : "null"
        case .bool(let b): return b ? "true" : "false"
        case .strings(let list): return "[" + list.map(string).joined(separator: ",") + "]"
        case .string(let text): return string(text)
        case .null: return "null"
        case .seconds(let duration):
            let (s, atto) = duration.components
            return render(.double(Double(s) + Double(atto) * 1e-18))
        }
    }

    private static func string(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [text])) ?? Data("[\"\"]".utf8)
        return TerminalText.inertJSON(String(decoding: data.dropFirst().dropLast(), as: UTF8.self))
    }
}
