import Foundation
import QuireNews
import Testing

/// The example from `JSONMapping`'s documentation: a user maps their own API into their own model.
struct Podcast: Sendable, Equatable {
    var id: String
    var title: String?
    var episodes: Int?
    var published: Date?
    var hosts: [String]?
    var tracks: [Track]?
}

struct Track: Sendable, Equatable {
    var name: String
    var seconds: Int?
}

let trackMapping = JSONMapping<Track> { m throws(NewsMappingError) in
    Track(name: try m(.requiredString("name")), seconds: try m(.int("length.seconds", lenient: true)))
}

let podcastMapping = JSONMapping<Podcast> { m throws(NewsMappingError) in
    Podcast(
        id: try m(.firstOf("guid", "id")),
        title: try m(.string("meta.title")),
        episodes: try m(.int("stats.episode_count", lenient: true)),
        published: try m(.date("meta.first_aired")),
        hosts: try m(.array("hosts", of: .string)),
        tracks: try m(.array("tracks", of: trackMapping)))
}

@Suite struct UserMappingTests {
    @Test func mapsAUserModel() throws {
        let body = #"{"id":"p1","meta":{"title":"Morning \u2615","first_aired":"2020-05-01T06:00:00+0200"},"stats":{"episode_count":"120"},"hosts":["Ana","","Li"],"tracks":[{"name":"Intro","length":{"seconds":30}},{"name":"Talk"}]}"#
        let podcast = try podcastMapping.decode(Array(body.utf8))
        #expect(podcast == Podcast(
            id: "p1", title: "Morning ☕", episodes: 120, published: Date(timeIntervalSince1970: 1_588_305_600),
            hosts: ["Ana", "Li"], tracks: [Track(name: "Intro", seconds: 30), Track(name: "Talk")]))
    }

    @Test func nestedErrorsNameTheFullPath() {
        let body = #"{"guid":"p1","tracks":[{"name":"Intro"},{"length":{"seconds":"long"},"name":"X"},{}]}"#
        #expect(throws: NewsMappingError(.invalidValue(#""long" is not an integer"#), at: [.key("tracks"), .index(1), .key("length"), .key("seconds")])) {
            try podcastMapping.decode(Array(body.utf8))
        }
        let missing = #"{"guid":"p1","tracks":[{"name":"Intro"},{}]}"#
        #expect(throws: NewsMappingError(.missingField, at: [.key("tracks"), .index(1), .key("name")])) {
            try podcastMapping.decode(Array(missing.utf8))
        }
        // `firstOf("guid", "id")`: the error names both keys, not only the last one tried.
        let neither = #expect(throws: NewsMappingError(.missingAll(["guid", "id"]), at: [.key("id")])) {
            try podcastMapping.decode(Array(#"{"guid":""}"#.utf8))
        }
        #expect(neither?.description == "id: required value is missing, null or empty, and so is guid")
    }

    @Test func customTransformerAndRule() throws {
        // A reusable transformer: a comma-separated string into a list.
        let commaList = ValueTransformer<String>.string.map { text throws(NewsMappingError) in
            text.split(separator: ",").map(String.init)
        }
        let mapping = JSONMapping<[String]> { m throws(NewsMappingError) in try m(.optional(["tags", "labels"], commaList)) }
        #expect(try mapping.decode(Array(#"{"labels":"a,b"}"#.utf8)) == ["a", "b"])
        #expect(throws: NewsMappingError(.typeMismatch(expected: "string", found: "number"), at: [.key("tags")])) {
            try mapping.decode(Array(#"{"tags":3}"#.utf8))
        }
    }
}
