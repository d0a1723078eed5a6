import Foundation
import Quire
import QuireNews
import Testing

/// Date keys of dates no calendar reaches (a decoded `1e300`, NaN): a key that sorts, not a trap
/// on the writer's thread that ends the program.
@Suite struct StoreKeyDateTests {
    private static let far = Date(timeIntervalSince1970: 1e300)
    private static let farPast = Date(timeIntervalSince1970: -1e300)

    @Test func datesPastTheKeyRangeTakeItsEnds() {
        let ordinary = StoreKey.date(Date(timeIntervalSince1970: 1_700_000_000))
        #expect(StoreKey.date(Self.far) == StoreKey.int(.max))
        #expect(StoreKey.date(Self.farPast) == StoreKey.int(.min))
        #expect(StoreKey.date(Date(timeIntervalSince1970: .nan)) == StoreKey.int(.min))
        #expect(StoreKey.date(Self.farPast).bytes.lexicographicallyPrecedes(ordinary.bytes))
        #expect(ordinary.bytes.lexicographicallyPrecedes(StoreKey.date(Self.far).bytes))
        // Near the end of the range, a date keeps its own key.
        #expect(StoreKey.date(Date(timeIntervalSince1970: 9e15)) == StoreKey.int(9_000_000_000_000_000_000))
        #expect(NYTDay(date: Self.far).year > 9999 && NYTDay(date: Self.farPast).year < 0)
    }

    /// A date a tenth of a microsecond before midnight keys to its own day's last millisecond:
    /// `timeIntervalSince1970` rounded it up to the next day's first, so a dump of its day left it out.
    @Test func aDateJustBeforeMidnightKeysToItsOwnDay() {
        #expect(StoreKey.date(Date(timeIntervalSinceReferenceDate: 599_615_999.9999999)) == StoreKey.int(1_577_923_199_999))
        #expect(StoreKey.date(Date(timeIntervalSinceReferenceDate: 599_616_000)) == StoreKey.int(1_577_923_200_000))
        #expect(StoreKey.date(Date(timeIntervalSinceReferenceDate: -0.0000001)) == StoreKey.int(978_307_199_999))
        #expect(StoreKey.date(Date(timeIntervalSince1970: 1_700_000_000.25)) == StoreKey.int(1_700_000_000_250))
    }

    @Test func anArticleDatedPastTheKeyRangeIsStoredAndIndexed() async throws {
        try await withTemporaryStorePath { path in
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(articles)
            var distant = generatedArticles(2)
            distant[0].publishedAt = Self.far
            distant[1].publishedAt = Self.farPast
            try await store.put(distant[0], in: articles)
            try await store.bulkInsert([distant[1]], into: articles)
            let newestFirst = try store.read { snap in
                try snap.values(in: articles.indexes[0], of: articles, reverse: true).map(\.id)
            }
            #expect(newestFirst == [distant[0].id, distant[1].id])
            #expect(try store.verify().isSound)
        }
    }
}
