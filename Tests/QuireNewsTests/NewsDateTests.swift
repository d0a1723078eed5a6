import Foundation
import QuireNews
import Testing

@Suite struct NewsDateTests {
    /// 2019-06-15T19:18:14Z
    let reference = Date(timeIntervalSince1970: 1_560_626_294)

    @Test(arguments: [
        "2019-06-15T19:18:14Z", "2019-06-15T19:18:14+0000", "2019-06-15T19:18:14+00:00",
        "2019-06-15T21:18:14+0200", "2019-06-15T14:18:14-05:00", "2019-06-15 19:18:14Z",
        "Sat, 15 Jun 2019 19:18:14 +0000", "Sat, 15 Jun 2019 20:18:14 +0100", "15 Jun 2019 19:18:14 GMT",
        "Sat, 15 Jun 2019 15:18:14 EDT", "Sat, 15 Jun 19 19:18:14 UT",
    ])
    func acceptsEveryForm(text: String) {
        #expect(NewsDate.parse(text) == reference)
    }

    @Test func keepsFractionalSeconds() throws {
        let date = try #require(NewsDate.parse("2019-06-15T19:18:14.250Z"))
        #expect(date.timeIntervalSince1970 == 1_560_626_294.25)
        #expect(NewsDate.parse("2012-01-01") == Date(timeIntervalSince1970: 1_325_376_000))
    }

    @Test func honoursRFC822OffsetsFromFeedzilla() {
        // 14:11 at +0100 is 13:11 UTC.
        #expect(NewsDate.parse("Tue, 05 Oct 2010 14:11:00 +0100") == Date(timeIntervalSince1970: 1_286_284_260))
        #expect(NewsDate.parse("Thu, 01 Jul 2010 14:14:38 +0000") == Date(timeIntervalSince1970: 1_277_993_678))
    }

    @Test(arguments: [
        "", "2019-02-30T00:00:00Z", "2019-13-01T00:00:00Z", "2019-06-15T25:00:00Z", "2019-06-15T19:18:14+0",
        "2019-06-15T19:18:14Zjunk", "yesterday", "Tue, 05 Foo 2010 14:11:00 +0100", "Tue, 05 Oct 2010 14:11:00 +01",
        "2019/06/15",
    ])
    func rejectsNonDates(text: String) {
        #expect(NewsDate.parse(text) == nil)
    }

    @Test func formatsEveryStyleAndParsesBack() {
        #expect(NewsDate.iso8601String(reference) == "2019-06-15T19:18:14Z")
        #expect(NewsDate.format(reference, offsetMinutes: 0, style: .iso8601Offset) == "2019-06-15T19:18:14+0000")
        #expect(NewsDate.format(reference, offsetMinutes: 0, style: .iso8601OffsetColon) == "2019-06-15T19:18:14+00:00")
        let rfc = NewsDate.format(reference, offsetMinutes: 60, style: .rfc822)
        #expect(rfc == "Sat, 15 Jun 2019 20:18:14 +0100")
        #expect(NewsDate.parse(rfc) == reference)
        let before1970 = Date(timeIntervalSince1970: -86_401)
        #expect(NewsDate.parse(NewsDate.iso8601String(before1970)) == before1970)
    }
}
