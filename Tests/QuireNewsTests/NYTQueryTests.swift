import Foundation
import QuireNews
import Testing

@Suite struct NYTQueryTests {
    @Test func queryItemsRoundTrip() throws {
        let query = NYTQuery(
            query: "climate café", filter: #"section_name:("Sports")"#, begin: NYTDay(string: "2016-08-12"),
            end: NYTDay(string: "20161231"), sort: .oldest, page: 7, fields: ["web_url", "headline", "pub_date"])
        let items = query.queryItems
        #expect(items.map(\.name) == ["q", "fq", "begin_date", "end_date", "sort", "page", "fl"])
        #expect(items.map(\.value) == ["climate café", #"section_name:("Sports")"#, "20160812", "20161231", "oldest", "7", "web_url,headline,pub_date"])
        #expect(try NYTQuery(queryItems: items) == query)
        let minimal = NYTQuery(query: "")
        #expect(minimal.queryItems.map(\.name) == ["page"])
        #expect(try NYTQuery(queryItems: minimal.queryItems) == minimal)
        #expect(try NYTQuery(queryItems: items + [("api-key", "secret")]) == query)
        for sort in NYTQuery.Sort.allCases {
            let q = NYTQuery(query: "x", sort: sort)
            #expect(try NYTQuery(queryItems: q.queryItems) == q)
        }
    }

    @Test func validation() throws {
        try NYTQuery(query: "x", page: 0).validate()
        try NYTQuery(query: "x", page: 100).validate()
        #expect(throws: QueryError.pageOutOfRange(101)) { try NYTQuery(query: "x", page: 101).validate() }
        #expect(throws: QueryError.pageOutOfRange(-1)) { try NYTQuery(query: "x", page: -1).validate() }
        let begin = try #require(NYTDay(string: "2020-01-02")), end = try #require(NYTDay(string: "2020-01-01"))
        #expect(throws: QueryError.endBeforeBegin(begin: begin, end: end)) { try NYTQuery(query: "x", begin: begin, end: end).validate() }
        try NYTQuery(query: "x", begin: begin, end: begin).validate()
    }

    @Test func parsingRejectsBadItems() {
        #expect(throws: QueryError.invalidValue(name: "begin_date", value: "2020-02-30")) { try NYTQuery(queryItems: [("begin_date", "2020-02-30")]) }
        #expect(throws: QueryError.invalidValue(name: "sort", value: "best")) { try NYTQuery(queryItems: [("sort", "best")]) }
        #expect(throws: QueryError.invalidValue(name: "page", value: "two")) { try NYTQuery(queryItems: [("page", "two")]) }
        #expect(throws: QueryError.unknownParameter("facet")) { try NYTQuery(queryItems: [("facet", "true")]) }
        #expect(throws: QueryError.repeatedParameter("q")) { try NYTQuery(queryItems: [("q", "a"), ("q", "b")]) }
    }

    @Test func days() throws {
        let day = try #require(NYTDay(string: "2024-02-29"))
        #expect(day.compact == "20240229" && day.description == "2024-02-29")
        #expect(day.date == Date(timeIntervalSince1970: 1_709_164_800))
        #expect(NYTDay(date: day.date.addingTimeInterval(86_399)) == day)
        #expect(NYTDay(string: "20240229") == day)
        #expect(NYTDay(string: "2023-02-29") == nil)
        #expect(NYTDay(string: "2024-2-29") == nil)
        #expect(NYTDay(string: "2024/02/29") == nil)
        #expect(NYTDay(string: "2024022") == nil)
        #expect(try #require(NYTDay(string: "2023-12-31")) < day)
    }
}
