// libFuzzer harness: QuireText's query parser, tokenizer and posting list cursor on arbitrary bytes.
// Built by scripts/fuzz.sh (not a SwiftPM target). A query must parse or throw QueryError with a
// position inside the query; tokens must be valid UTF-8 within the text; posting bytes must decode
// or throw PostingFormatError. A trap, an ASan report or a timeout is a finding.
import Foundation
import QuireText

/// Writes seed queries, texts and posting lists into `$QUIRE_FUZZ_SEED_DIR`.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    guard let dir = ProcessInfo.processInfo.environment["QUIRE_FUZZ_SEED_DIR"] else { return 0 }
    let queries = [
        "storm surge", "(storm OR flood) -rain", "headline:\"storm surge\" section:Science", "clim* \"storm sur\"*",
        "Café covid-19 東京都 ⚽️", "a AND (b OR (c NOT d))", "“quoted” headline:(x OR abstract:y)",
    ]
    var seeds: [[UInt8]] = queries.map { [0] + Array($0.utf8) }
    seeds += queries.map { [1] + Array($0.utf8) }
    let postings = (0..<300).map { Posting(document: UInt32($0 * 7), occurrences: [Occurrence(field: UInt8($0 % 6), position: UInt32($0))]) }
    seeds.append([2] + PostingListEncoder.encode(postings, blockSize: 16))
    for (i, seed) in seeds.enumerated() {
        _ = FileManager.default.createFile(atPath: "\(dir)/seed-text-\(i)", contents: Data(seed))
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let bytes = UnsafeBufferPointer(start: data + 1, count: size - 1)
    switch data[0] % 3 {
    case 0:
        let text = String(decoding: bytes, as: UTF8.self)
        do {
            let query = try QueryParser().parse(text)
            var highlighter = Highlighter(query: query)
            _ = highlighter.snippet(of: text, maximumTokens: 8)
        } catch {
            precondition(error.position >= 0 && error.position <= text.count, "error position out of range")
        }
    case 1:
        let text = String(decoding: bytes, as: UTF8.self)
        var tokenizer = Tokenizer()
        var buffer = TokenBuffer()
        tokenizer.tokenize(text, field: 3, into: &buffer)
        let length = text.utf8.count
        for token in buffer.tokens {
            precondition(token.length > 0 && token.start + token.length <= buffer.bytes.count, "token outside the buffer")
            precondition(token.sourceStart < token.sourceEnd && Int(token.sourceEnd) <= length, "span outside the text")
            precondition(String(validating: buffer.bytes[token.start..<(token.start + token.length)], as: UTF8.self) != nil, "invalid UTF-8 term")
        }
        var table = TermTable()
        buffer.forEachTerm(interning: &table) { _, _, occurrences in precondition(!occurrences.isEmpty, "empty group") }
    default:
        var cursor: PostingCursor
        do { cursor = try PostingCursor(UnsafeRawBufferPointer(bytes)) } catch { return 0 }
        var target: UInt32 = 0
        while let document = try? cursor.advance(to: target) {
            cursor.forEachOccurrence { _ in }
            cursor.forEachField { _, _ in }
            guard document < UInt32.max else { break }
            target = document + 1 + (document & 3)
        }
    }
    return 0
}
