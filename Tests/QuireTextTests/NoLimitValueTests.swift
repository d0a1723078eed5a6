import Testing
import QuireText

/// `.max` is how a caller says "no limit": the text layer's size parameters take it (and
/// other values past any real size) without an arithmetic trap.
@Suite struct NoLimitValueTests {
    @Test func aSnippetWithNoByteLimitIsTheWholeWindow() throws {
        var highlighter = Highlighter(query: try QueryParser().parse("storm"))
        let text = (0..<40).map { "word\($0)" }.joined(separator: " ") + " a storm came"
        // The window does not start at the text's start: its end was `start + maximumBytes`.
        let snippet = highlighter.snippet(of: text, maximumTokens: 3, maximumBytes: .max)
        #expect(snippet == "…word39 a «storm»…")
    }

    @Test func aResumedListWithAHugeBlockSizeStaysTheList() throws {
        let postings = (0..<200).map { Posting(document: UInt32($0 * 3), occurrences: [Occurrence(field: 0, position: 1)]) }
        let head = PostingListEncoder.encode(Array(postings[..<150]), blockSize: 64)
        var encoder = PostingListEncoder(blockSize: .max)
        try head.withUnsafeBytes { try encoder.resume(from: $0) }
        #expect(encoder.documentCount == 150)
        for posting in postings[150...] { encoder.append(document: posting.document, occurrences: posting.occurrences) }
        var resumed: [UInt8] = []
        encoder.finish(into: &resumed)
        #expect(try PostingCursor.decodeAll(resumed).map(\.document) == postings.map(\.document))
    }

    @Test func aTermTableSizedForEverythingStillInterns() {
        var table = TermTable(capacity: .max)
        #expect(table.intern("storm") == 0 && table.intern("surge") == 1 && table.intern("storm") == 0)
        #expect(table.term(1) == "surge")
    }
}
