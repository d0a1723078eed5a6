import Foundation
import QuireCodec
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
        // RFC 3339's lower-case letters (`z` was refused where `t` was taken).
        "2019-06-15t19:18:14z",
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

    /// Dates must fall in years 0000–9999 in UTC once read: an offset, or a fraction that rounds
    /// to the next instant a Date holds (30 µs apart in 9999), moved some out, and dump printed a
    /// year that load refuses. The edges that stay in print back as they read.
    @Test func datesOutsideYearsZeroToNineThousandNineHundredNinetyNineInUTCAreRefused() {
        for text in [
            "9999-12-31T23:59:59.99999Z", "9999-12-31T23:59:59.999999999Z", "9999-12-31T23:00:00-02:00",
            "0000-01-01T00:00:00+01:00", "Fri, 31 Dec 9999 23:30:00 -0100",
        ] {
            #expect(NewsDate.parse(text) == nil, "\(text)")
        }
        for text in ["9999-12-31T23:59:59.99Z", "9999-12-31T23:59:59Z", "0000-01-01T00:00:00Z", "9999-12-31T22:00:00-01:00"] {
            let date = NewsDate.parse(text)
            #expect(date != nil, "\(text)")
            let printed = date.map { String(CompactValue.date($0).jsonString().dropFirst().dropLast()) }
            #expect(printed.flatMap(NewsDate.parse) == date, "\(text) printed as \(printed ?? "")")
            #expect(printed.map { $0.hasPrefix("9999-") || $0.hasPrefix("0000-") } == true, "\(text) printed as \(printed ?? "")")
        }
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

    @Test func aFractionThatRoundsToAWholeSecondCarriesIt() {
        let almost = Date(timeIntervalSince1970: 1_560_626_294.9996)
        #expect(NewsDate.iso8601String(almost) == "2019-06-15T19:18:15Z")
        let endOfYear = Date(timeIntervalSince1970: 1_577_836_799.9997)
        #expect(NewsDate.iso8601String(endOfYear) == "2020-01-01T00:00:00Z")
        #expect(NewsDate.format(almost, offsetMinutes: 60, style: .rfc822) == "Sat, 15 Jun 2019 20:18:15 +0100")
        let beforeEpoch = Date(timeIntervalSince1970: -0.25)
        #expect(NewsDate.iso8601String(beforeEpoch) == "1969-12-31T23:59:59.750Z")
    }

    /// A damaged stored timestamp (a change feed's commit time, a reject's) is written, not a trap.
    @Test func timestampsNoCalendarHoldsAreWrittenWithoutATrap() {
        for seconds in [Double.infinity, -.infinity, .nan, 1e300, -1e300, 9.3e15] {
            #expect(!NewsDate.iso8601String(Date(timeIntervalSince1970: seconds)).isEmpty)
        }
    }

    @Test func millisecondTimestampsAreAllOneWidth() {
        #expect(NewsDate.iso8601MillisecondsString(reference) == "2019-06-15T19:18:14.000Z")
        let withFraction = Date(timeIntervalSince1970: 1_560_626_294.25)
        #expect(NewsDate.iso8601MillisecondsString(withFraction) == "2019-06-15T19:18:14.250Z")
        #expect(NewsDate.iso8601MillisecondsString(withFraction).count == NewsDate.iso8601MillisecondsString(reference).count)
    }
}

/// Sub-second dates keep every digit a `Date` can hold through text, the codec and back.
@Suite struct DatePrecisionTests {
    struct Holder: Codable, Equatable { var at: Date }

    @Test(arguments: [
        "2026-03-01T12:34:56.123456789Z", "2026-03-01T12:34:56.1234567Z", "2026-03-01T12:34:56.000123Z",
        "1999-12-31T23:59:59.000001Z", "2015-07-04T00:00:00.5Z", "1970-01-01T00:00:00.000000100Z",
        "2030-01-19T03:14:07.9999999Z", "2026-03-01T12:34:56.654321Z", "2100-12-31T23:59:59.999999Z",
    ])
    func subSecondDatesSurviveTheCodecAndText(text: String) throws {
        let date = try #require(NewsDate.parse(text))
        var table = FieldTable()
        let bytes = try CompactEncoder(options: .init(checksum: true)).encode(Holder(at: date), fields: &table)
        #expect(try CompactDecoder().decode(Holder.self, from: bytes, fields: table).at == date)
        // What `quire dump` writes reads back as the very same instant (dump → load is exact).
        let json = CompactValue.date(date).jsonString()
        let printed = String(json.dropFirst().dropLast())
        #expect(NewsDate.parse(printed) == date, "\(text) printed as \(printed)")
        // Microseconds come back as written; finer text, within the spacing of Date's values
        // (119 ns in 2018–2035, 238 ns up to 2069, 477 ns up to 2137).
        let digits = text.split(separator: ".").last.map { $0.dropLast().count } ?? 0
        if digits <= 6 { #expect(printed == text) }
        func fraction(_ s: String) -> Double { Double("0." + (s.split(separator: ".").last.map { String($0.dropLast()) } ?? "0")) ?? -1 }
        let spacing = date.timeIntervalSinceReferenceDate.ulp
        let difference = abs(fraction(printed) - fraction(text))
        #expect(min(difference, 1 - difference) <= spacing, "\(text) printed as \(printed)")
    }
}
