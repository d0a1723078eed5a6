import Foundation
import Testing
@testable import Quire

/// A phrase ending in a prefix (`"the st*"`) matches where the phrase's words are followed by any
/// word starting with the prefix, however many words start with it: its expansions are walked
/// together in document order (``PostingListHeap``), each candidate asking only those that hold it.
@Suite struct SearchPhrasePrefixTests {
    @Test func aPhraseEndingInAPrefixOfManyExpansionsMatchesWhereAWordFollows() async throws {
        var random = SystemRandomNumberGenerator()
        // 40 words starting with "st", and others; each note a few of them in a row.
        let expansions = (0..<40).map { "st" + String(UnicodeScalar(UInt8(97 + $0 % 26))) + String(repeating: "x", count: $0 / 26) }
        let vocabulary = expansions + ["the", "of", "storm"] + (0..<20).map { "w\($0)x" }
        let corpus = (0..<300).map { i in
            note("n\(i)", (0..<8).map { _ in vocabulary.randomElement(using: &random)! }.joined(separator: " "))
        }
        try await withNotes(corpus) { store throws in
            for (phrase, prefix) in [(["the"], "st"), (["of", "the"], "st"), (["storm"], "sta")] {
                let expected = corpus.filter { note in
                    let words = note.title.split(separator: " ").map(String.init)
                    return words.indices.contains { i in
                        i + phrase.count < words.count && Array(words[i..<(i + phrase.count)]) == phrase
                            && words[i + phrase.count].hasPrefix(prefix)
                    }
                }.map(\.id)
                let query = "\"" + phrase.joined(separator: " ") + " \(prefix)*\""
                #expect(try Set(ids(store, query)) == Set(expected), "\(query)")
            }
        }
    }
}
