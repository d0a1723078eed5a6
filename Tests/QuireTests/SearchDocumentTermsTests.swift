import Testing

@testable import Quire

@Suite struct SearchDocumentTermsTests {
    /// Terms that share their first 6 bytes or more (the sort's number holds 6), terms that are
    /// prefixes of others, bytes above 0x7F and a zero byte, shuffled.
    static func terms(count: Int, seed: UInt64) -> [[UInt8]] {
        var state = seed
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let stems: [[UInt8]] = [Array("govern".utf8), Array("governor".utf8), Array("g".utf8), Array("über".utf8), [0x61, 0x00]]
        var seen = Set<[UInt8]>()
        var terms: [[UInt8]] = []
        while terms.count < count {
            var term = stems[Int(next() % UInt64(stems.count))]
            for _ in 0..<Int(next() % 5) { term.append(UInt8(0x61 + next() % 26)) }
            if next() % 7 == 0 { term.append(0xC3) }
            if seen.insert(term).inserted { terms.append(term) }
        }
        return terms
    }

    private func sortedLists(_ terms: [[UInt8]]) -> (sorted: [[UInt8]], groups: [[UInt8]], expected: [[UInt8]]) {
        var document = SearchDocumentTerms()
        for (i, term) in terms.enumerated() {
            term.withUnsafeBytes { document.append(term: $0, groups: [UInt8(i & 0xFF), UInt8(i >> 8 & 0xFF)]) }
        }
        document.sortByTerm()
        let (sorted, groups) = document.withTerms { view in
            ((0..<view.count).map { Array(view.term($0)) }, (0..<view.count).map { Array(view.groups($0)) })
        }
        return (sorted, groups, terms.sorted { $0.lexicographicallyPrecedes($1) })
    }

    @Test func sortingPutsTermsInByteOrderWithTheirOwnGroups() {
        let terms = Self.terms(count: 600, seed: 7)
        let (sorted, groups, expected) = sortedLists(terms)
        #expect(sorted == expected)
        let place = Dictionary(uniqueKeysWithValues: terms.enumerated().map { ($0.element, $0.offset) })
        #expect(zip(sorted, groups).allSatisfy { term, g in
            let i = place[term]!
            return g == [UInt8(i & 0xFF), UInt8(i >> 8 & 0xFF)]
        })
        // A list reused for a shorter document holds that one only.
        var document = SearchDocumentTerms()
        for term in terms { term.withUnsafeBytes { document.append(term: $0, groups: []) } }
        document.sortByTerm()
        document.removeAll()
        for term in terms.prefix(3).reversed() { term.withUnsafeBytes { document.append(term: $0, groups: []) } }
        document.sortByTerm()
        #expect(document.withTerms { view in (0..<view.count).map { Array(view.term($0)) } } == terms.prefix(3).sorted {
            $0.lexicographicallyPrecedes($1)
        })
    }

    @Test func moreTermsThanTheSortCanNumberAreSortedToo() {
        let terms = Self.terms(count: 70_000, seed: 11)
        let (sorted, _, expected) = sortedLists(terms)
        #expect(sorted == expected)
    }
}
