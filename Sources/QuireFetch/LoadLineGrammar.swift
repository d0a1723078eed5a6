/// The lines `quire load` reads: JSON Lines, or the array `dump --format json` writes, one
/// record a line. Shared by the articles' loader and the loads of the other collections, so
/// that both refuse the same malformed input.
extension ArticleLoader {
    /// How the input holds its records: JSON Lines, or the array `dump --format json` writes
    /// (`[` and `]` on lines of their own, a comma after each record but the last).
    package enum Layout: Sendable {
        case lines, array

        /// The layout of an input whose first byte that is not white space is `byte`.
        package init(firstByte byte: UInt8) { self = byte == UInt8(ascii: "[") ? .array : .lines }
    }

    /// What a line with something on it holds.
    package struct LineContent {
        package enum Kind {
            case open, close, empty
            case record(Range<Int>)
        }
        package var kind: Kind
        /// A comma before the line's content.
        package var leadingComma: Bool
        /// A comma after the line's content.
        package var trailingComma: Bool
        /// A comma before or after it.
        var comma: Bool { leadingComma || trailingComma }

        /// What the next line's commas are checked against.
        package var edge: LineEdge {
            switch kind {
            case .open: .open
            case .close, .empty: .close
            case .record: .record(trailingComma: trailingComma)
            }
        }
    }

    /// The last line with something on it, as far as the commas of the next one go.
    package enum LineEdge: Sendable {
        case open, close
        case record(trailingComma: Bool)
    }

    /// The line's content, or nil for a blank line. A record is the line without the spaces
    /// around it and a comma before or after it.
    package static func lineContent(_ bytes: UnsafeBufferPointer<UInt8>, _ line: Range<Int>) -> LineContent? {
        func isSpace(_ b: UInt8) -> Bool { b == 32 || b == 9 || b == 13 }
        var lower = line.lowerBound
        var upper = line.upperBound
        while lower < upper, isSpace(bytes[lower]) { lower += 1 }
        while upper > lower, isSpace(bytes[upper - 1]) { upper -= 1 }
        guard lower < upper else { return nil }
        var (leading, trailing) = (false, false)
        if bytes[lower] == UInt8(ascii: ",") {
            lower += 1
            leading = true
        }
        if upper > lower, bytes[upper - 1] == UInt8(ascii: ",") {
            upper -= 1
            trailing = true
        }
        let kind: LineContent.Kind
        // Only a line that begins with a bracket is looked at closer: copying every record's
        // bytes without its spaces took 4% of a load's time.
        guard upper > lower, bytes[lower] == UInt8(ascii: "[") || bytes[lower] == UInt8(ascii: "]") else {
            return LineContent(kind: .record(lower..<upper), leadingComma: leading, trailingComma: trailing)
        }
        let inner = UnsafeBufferPointer(rebasing: bytes[lower..<upper]).filter { !isSpace($0) }
        switch inner {
        case [UInt8(ascii: "[")]: kind = .open
        case [UInt8(ascii: "]")]: kind = .close
        case [UInt8(ascii: "["), UInt8(ascii: "]")]: kind = .empty
        default: kind = .record(lower..<upper)
        }
        return LineContent(kind: kind, leadingComma: leading, trailingComma: trailing)
    }

    package static let oneRecordALine =
        "load reads a JSON array as 'dump --format json' writes it: '[' and ']' on lines of their own, one record a line"

    /// Why a line does not belong where it is, or nil when it does. `previous`: the line with
    /// something on it before this one, when it is known (a line that begins a piece parsed on
    /// its own is checked against it afterwards).
    package static func structureProblem(
        _ line: LineContent, _ layout: Layout, open: Bool, closed: Bool, after previous: LineEdge? = nil
    ) -> String? {
        if closed { return "text after the JSON array's closing ']'" }
        switch (layout, line.kind) {
        case (.lines, .record): return line.comma ? "a comma beside the record: JSON Lines has one record a line" : nil
        case (.lines, _): return "a bracket in JSON Lines: an array must begin the input"
        case (.array, .open), (.array, .empty):
            if open { return "a second '[': the input holds one JSON array" }
            return line.comma ? "a comma beside the array's '['" : nil
        case (.array, .close):
            if !open { return "a ']' before the array's '['" }
            if line.trailingComma { return "a comma after the JSON array's closing ']'" }
        case (.array, .record):
            if !open { return oneRecordALine }
        }
        return previous.flatMap { separatorProblem(after: $0, line) }
    }

    /// Why the commas between an array's line and the one before it are wrong: records are
    /// separated by exactly one comma, and none follows `[` or the last record.
    package static func separatorProblem(after previous: LineEdge, _ line: LineContent) -> String? {
        switch (previous, line.kind) {
        case (.open, _):
            return line.leadingComma ? "a comma after the array's '['" : nil
        case (.record(let trailing), .record):
            switch (trailing ? 1 : 0) + (line.leadingComma ? 1 : 0) {
            case 0: return "no comma between this record and the one before it"
            case 2: return "two commas between this record and the one before it"
            default: return nil
            }
        case (.record(let trailing), .close):
            return trailing || line.leadingComma ? "a comma after the JSON array's last record" : nil
        default:
            return nil  // a line after ']' is refused as text after the array
        }
    }
}
