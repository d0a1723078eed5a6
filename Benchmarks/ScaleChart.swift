import Foundation

/// An SVG line chart of `--scale` results, written by hand: records/s of each operation
/// against the store's size, both axes logarithmic, so a flat line is a cost that does not
/// grow with N.
enum ScaleChart {
    static let series: [(name: String, color: String, value: @Sendable (ScaleRun.Row) -> Double)] = [
        ("bulk insert", "#1f77b4", { $0.bulkInsert }),
        ("point gets (1 thread)", "#d62728", { $0.pointGets }),
        ("scan (decode all)", "#2ca02c", { $0.scan }),
        ("verify", "#9467bd", { $0.verify }),
    ]

    static func svg(_ rows: [ScaleRun.Row], title: String) -> String {
        let (width, height) = (760.0, 440.0)
        let (left, right, top, bottom) = (90.0, 200.0, 50.0, 60.0)
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let sizes = rows.map { log10(Double($0.records)) }
        let values = rows.flatMap { row in series.map { log10(max(1, $0.value(row))) } }
        let (xMin, xMax) = ((sizes.min() ?? 5).rounded(.down), max((sizes.max() ?? 7).rounded(.up), (sizes.min() ?? 5) + 1))
        let (yMin, yMax) = ((values.min() ?? 4).rounded(.down), max((values.max() ?? 6).rounded(.up), (values.min() ?? 4) + 1))
        func x(_ v: Double) -> Double { left + (v - xMin) / (xMax - xMin) * plotWidth }
        func y(_ v: Double) -> Double { top + plotHeight - (v - yMin) / (yMax - yMin) * plotHeight }

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="13">
            <rect width="100%" height="100%" fill="#ffffff"/>
            <text x="16" y="28" font-size="16" font-weight="bold">\(escape(title))</text>

            """
        for decade in stride(from: xMin, through: xMax, by: 1) {
            svg += line(x(decade), top, x(decade), top + plotHeight, "#dddddd")
            svg += text(x(decade), top + plotHeight + 20, "\(Report.compact(pow(10, decade)))", anchor: "middle")
        }
        for decade in stride(from: yMin, through: yMax, by: 1) {
            svg += line(left, y(decade), left + plotWidth, y(decade), "#dddddd")
            svg += text(left - 8, y(decade) + 4, "\(Report.compact(pow(10, decade)))/s", anchor: "end")
        }
        svg += text(left + plotWidth / 2, height - 16, "records in the store", anchor: "middle")
        for (index, item) in series.enumerated() {
            let points = rows.map { (x(log10(Double($0.records))), y(log10(max(1, item.value($0))))) }
            let path = points.map { "\(f($0.0)),\(f($0.1))" }.joined(separator: " ")
            svg += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(item.color)\" stroke-width=\"2\"/>\n"
            for point in points {
                svg += "<circle cx=\"\(f(point.0))\" cy=\"\(f(point.1))\" r=\"3.5\" fill=\"\(item.color)\"/>\n"
            }
            let legendY = top + 10 + Double(index) * 22
            svg += line(left + plotWidth + 16, legendY, left + plotWidth + 40, legendY, item.color, width: 3)
            svg += text(left + plotWidth + 46, legendY + 4, item.name, anchor: "start")
        }
        return svg + "</svg>\n"
    }

    private static func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, _ color: String, width: Double = 1)
        -> String
    {
        "<line x1=\"\(f(x1))\" y1=\"\(f(y1))\" x2=\"\(f(x2))\" y2=\"\(f(y2))\" stroke=\"\(color)\" stroke-width=\"\(f(width))\"/>\n"
    }

    private static func text(_ x: Double, _ y: Double, _ content: String, anchor: String) -> String {
        "<text x=\"\(f(x))\" y=\"\(f(y))\" text-anchor=\"\(anchor)\" fill=\"#333333\">\(escape(content))</text>\n"
    }

    private static func f(_ value: Double) -> String { String(format: "%.1f", value) }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
