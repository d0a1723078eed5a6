import Foundation

/// An SVG bar chart of a run's ratios, written by hand: one row per ratio, bars growing right
/// of the 1× line when the subject is faster (or bigger) and left when slower, on a log2 scale
/// so 4× and ¼× are the same length.
enum RatioChart {
    static func svg(_ ratios: [Ratio], title: String) -> String {
        let rowHeight = 26.0
        let labelWidth = 430.0
        let plotWidth = 420.0
        let top = 50.0
        let width = labelWidth + plotWidth + 90
        let height = top + rowHeight * Double(max(1, ratios.count)) + 40
        // ±maxLog2 fits the widest ratio, at least ±2 (¼× … 4×).
        let maxLog2 = max(2, ratios.map { abs(log2(max($0.value, 1e-9))) }.max() ?? 2).rounded(.up)
        let center = labelWidth + plotWidth / 2
        let scale = (plotWidth / 2) / maxLog2

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="13">
            <rect width="100%" height="100%" fill="#ffffff"/>
            <text x="16" y="28" font-size="16" font-weight="bold">\(escape(title))</text>

            """
        // Gridlines at powers of two.
        for step in stride(from: -Int(maxLog2), through: Int(maxLog2), by: 1) {
            let x = center + Double(step) * scale
            let label = step >= 0 ? "\(1 << step)×" : "1/\(1 << -step)×"
            let stroke = step == 0 ? "#333333" : "#dddddd"
            svg += line(x, top - 6, x, height - 34, stroke)
            svg += "<text x=\"\(f(x))\" y=\"\(f(height - 18))\" text-anchor=\"middle\" fill=\"#666666\">\(label)</text>\n"
        }
        for (index, ratio) in ratios.enumerated() {
            let y = top + Double(index) * rowHeight
            let length = log2(max(ratio.value, 1e-9)) * scale
            let x = length >= 0 ? center : center + length
            let color = ratio.isSize ? (ratio.value <= 1 ? "#4c9a2a" : "#c0504d") : (ratio.value >= 1 ? "#4c9a2a" : "#c0504d")
            let label = ratio.isSize ? "size: \(ratio.subject) vs \(ratio.reference)" : "\(ratio.subject) vs \(ratio.reference)"
            svg += "<text x=\"\(f(labelWidth - 10))\" y=\"\(f(y + 17))\" text-anchor=\"end\">\(escape(label))</text>\n"
            svg += "<rect x=\"\(f(x))\" y=\"\(f(y + 5))\" width=\"\(f(max(1, abs(length))))\" height=\"\(f(rowHeight - 10))\" fill=\"\(color)\"/>\n"
            let valueX = length >= 0 ? center + length + 6 : center + 6
            svg += "<text x=\"\(f(valueX))\" y=\"\(f(y + 17))\">\(Report.fixed(ratio.value, 2))×</text>\n"
        }
        svg += "</svg>\n"
        return svg
    }

    private static func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, _ stroke: String) -> String {
        "<line x1=\"\(f(x1))\" y1=\"\(f(y1))\" x2=\"\(f(x2))\" y2=\"\(f(y2))\" stroke=\"\(stroke)\"/>\n"
    }

    private static func f(_ value: Double) -> String { Report.fixed(value, 1) }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
