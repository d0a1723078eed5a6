import Foundation
import QuireNews

/// The order of a list.
enum ListSort: String, Sendable, CaseIterable {
    /// Publication date, newest first (the default).
    case newest
    /// Publication date, oldest first.
    case oldest
    /// Identification key order; lists undated records too.
    case id
}

/// A parsed `GET /api/articles` request.
struct ArticleQuery: Sendable {
    var since: Date?
    /// The day after `until`: the list includes the whole `until` day.
    var untilExclusive: Date?
    var section: String?
    /// `q`, the full-text query.
    var text: String?
    var sort: ListSort = .newest
    var limit = 50
    var after: PageCursor?
    /// `fields`: only these top-level fields of each record, in this order (nil: all).
    var fields: [String]?

    static let defaultLimit = 50
    static let maxLimit = 500
    /// How deep a search pages: its hits are ranked whole, so page k costs the k pages before it.
    static let maxSearchDepth = 10_000

    /// A 400's message.
    struct Invalid: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// Parses decoded query parameters; unknown names and repeated ones are errors, so a typo
    /// never silently widens a list.
    init(parameters: [(name: String, value: String)]) throws(Invalid) {
        var seen = Set<String>()
        var cursorText: String?
        var relevance = false
        for (name, value) in parameters {
            guard seen.insert(name).inserted else { throw Invalid("parameter '\(name)' is given twice") }
            switch name {
            case "since": since = try Self.day(value, name)
            case "until": untilExclusive = try Self.day(value, name).addingTimeInterval(86_400)
            case "section":
                guard !value.isEmpty else { throw Invalid("parameter 'section' is empty") }
                section = value
            // An empty search box (the web page's, a form's `q=` or `q=+`) asks for the list.
            case "q": text = value.allSatisfy(\.isWhitespace) ? nil : value
            case "sort":
                // A search's ranking is its `id` order (a list's): `relevance` names it so.
                relevance = value == "relevance"
                guard let parsed = relevance ? .id : ListSort(rawValue: value) else {
                    throw Invalid("parameter 'sort' must be newest, oldest, id or (with q) relevance, not '\(value)'")
                }
                sort = parsed
            case "limit":
                guard value.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let n = Int(value),
                    (1...Self.maxLimit).contains(n)
                else {
                    throw Invalid("parameter 'limit' must be a number from 1 to \(Self.maxLimit)")
                }
                limit = n
            case "cursor": cursorText = value
            case "fields":
                let names = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                guard !names.isEmpty, names.count <= 32, names.allSatisfy({ !$0.isEmpty && !$0.contains(".") }) else {
                    throw Invalid("parameter 'fields' must be 1 to 32 comma-separated field names, like id,headline")
                }
                guard Set(names).count == names.count else {
                    throw Invalid("parameter 'fields' names a field twice")  // an object with a key twice is not JSON a client can trust
                }
                // A typo never silently narrows the answer to nothing.
                if let unknown = names.first(where: { !Article.fieldNames.contains($0) }) {
                    throw Invalid(
                        "parameter 'fields' names no field of an article: '\(unknown.prefix(100))' (fields: \(Article.fieldNames.joined(separator: ", ")))")
                }
                fields = names
            default:
                throw Invalid(
                    "unknown parameter '\(name)' (known: since, until, section, q, sort, limit, cursor, fields)")
            }
        }
        if let since, let untilExclusive, since >= untilExclusive {
            throw Invalid("'since' is after 'until'")
        }
        if relevance, text == nil { throw Invalid("sort=relevance ranks a search: it needs q") }
        if sort == .id, text == nil, since != nil || untilExclusive != nil {
            throw Invalid("'since' and 'until' need sort=newest or sort=oldest (or q, a search)")
        }
        if let cursorText {
            guard let cursor = PageCursor(text: cursorText), cursor.sort == sort, cursor.filters == filterTag,
                (cursor.searchOffset != nil) == (text != nil)
            else {
                throw Invalid("parameter 'cursor' is not a cursor of this list (pass the 'next' value unchanged, with the same filters)")
            }
            after = cursor
        }
    }

    /// A digest of the filters and order, carried by cursors so one is used only with its list.
    var filterTag: UInt64 {
        var hash = FNV1a()
        hash.add(sort.rawValue)
        hash.add(since.map { "\($0.timeIntervalSince1970)" } ?? "-")
        hash.add(untilExclusive.map { "\($0.timeIntervalSince1970)" } ?? "-")
        hash.add(section ?? "\u{0}")
        hash.add(text ?? "\u{0}")
        return hash.value
    }

    /// The parameters of `/api/articles/{id}`: `fields` alone, as for a list.
    static func recordFields(_ parameters: [(name: String, value: String)]) throws(Invalid) -> [String]? {
        guard let first = parameters.first else { return nil }
        if let other = parameters.first(where: { $0.name != "fields" }) {
            throw Invalid("unknown parameter '\(other.name.prefix(100))' (known: fields)")
        }
        guard parameters.count == 1 else { throw Invalid("parameter 'fields' is given twice") }
        return try ArticleQuery(parameters: [first]).fields
    }

    /// `YYYY-MM-DD` or `YYYYMMDD`, a UTC day: the CLI's days (`NYTDay`, proleptic Gregorian as
    /// ISO 8601 and the stored dates; Foundation's Gregorian calendar is Julian before 1582-10-15).
    static func day(_ text: String, _ name: String) throws(Invalid) -> Date {
        let digits = text.count == 10 && Array(text)[4] == "-" && Array(text)[7] == "-"
            ? text.replacingOccurrences(of: "-", with: "") : text
        guard digits.count == 8, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else {
            throw Invalid("parameter '\(name)' must be a day, YYYY-MM-DD or YYYYMMDD, not '\(text)'")
        }
        guard let day = NYTDay(string: digits) else { throw Invalid("parameter '\(name)' is not a calendar day: '\(text)'") }
        return day.date
    }
}

/// Where the next page of a list starts: the last record of the page before (its index key
/// and identification key), or for a search the number of hits before it; the order, and the
/// filters' digest. Opaque to clients: base64url of a small versioned binary form (version 1: a
/// list position, 2: a search offset).
struct PageCursor: Sendable, Equatable {
    var sort: ListSort
    var indexKey: [UInt8]?
    var key: [UInt8]
    var filters: UInt64 = 0
    /// For a search page: the hits before it.
    var searchOffset: Int?

    init(sort: ListSort, indexKey: [UInt8]?, key: [UInt8], filters: UInt64 = 0) {
        self.sort = sort
        self.indexKey = indexKey
        self.key = key
        self.filters = filters
    }

    /// The cursor of a search page that starts after `offset` hits.
    init(sort: ListSort, searchOffset offset: Int, filters: UInt64) {
        self.init(sort: sort, indexKey: nil, key: [], filters: filters)
        searchOffset = offset
    }

    /// The cursor as a URL-safe string.
    var text: String {
        var bytes: [UInt8] = [searchOffset == nil ? 1 : 2, UInt8(ListSort.allCases.firstIndex(of: sort)!)]
        withUnsafeBytes(of: filters.bigEndian) { bytes += $0 }
        if let searchOffset {
            bytes += Self.length(searchOffset)
        } else {
            bytes += indexKey.map { [1] + Self.length($0.count) + $0 } ?? [0]
            bytes += Self.length(key.count) + key
        }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Reads ``text``; nil for anything else.
    init?(text: String) {
        var b64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.count % 4 != 0 { b64 += "=" }
        guard text.count < 8192, let data = Data(base64Encoded: b64) else { return nil }
        var bytes = ArraySlice(data)
        func take(_ n: Int) -> ArraySlice<UInt8>? {
            guard n >= 0, bytes.count >= n else { return nil }
            defer { bytes = bytes.dropFirst(n) }
            return bytes.prefix(n)
        }
        func length() -> Int? {
            guard let raw = take(4) else { return nil }
            return raw.reduce(0) { $0 << 8 | Int($1) }
        }
        guard let version = take(1)?.first, version == 1 || version == 2, let s = take(1)?.first,
            Int(s) < ListSort.allCases.count, let f = take(8)
        else { return nil }
        sort = ListSort.allCases[Int(s)]
        filters = f.reduce(0) { $0 << 8 | UInt64($1) }
        key = []
        if version == 2 {
            guard let offset = length(), offset > 0, offset < ArticleQuery.maxSearchDepth, bytes.isEmpty else { return nil }
            indexKey = nil
            searchOffset = offset
            return
        }
        guard let hasIndex = take(1)?.first, hasIndex <= 1 else { return nil }
        if hasIndex == 1 {
            guard let n = length(), let k = take(n) else { return nil }
            indexKey = Array(k)
        } else {
            indexKey = nil
        }
        guard let n = length(), n > 0, let k = take(n), bytes.isEmpty else { return nil }
        key = Array(k)
    }

    private static func length(_ n: Int) -> [UInt8] {
        [UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
    }
}

/// A 64-bit content hash for ETags, eight bytes a step (a page of 30 KB costs microseconds).
/// Not for anything an attacker must not forge.
enum ContentHash {
    static func of(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { raw in
            var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(raw.count)
            var i = 0
            while i + 8 <= raw.count {
                h = (h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
                h ^= h >> 32
                i += 8
            }
            var tail: UInt64 = 0
            while i < raw.count {
                tail = tail << 8 | UInt64(raw[i])
                i += 1
            }
            h = (h ^ tail) &* 0xC4CE_B9FE_1A85_EC53
            return h ^ (h >> 33)
        }
    }
}

/// 64-bit FNV-1a, for cursor digests (not for anything an attacker must not forge).
struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            value ^= UInt64(byte)
            value &*= 0x0000_0100_0000_01b3
        }
    }

    mutating func add(_ text: String) {
        add(text.utf8)
        add(CollectionOfOne(0xFF))
    }
}

/// Strict percent-decoding of URL parts.
enum PercentDecoding {
    /// Decodes `%HH` escapes (and `+` as a space when `plusIsSpace`); nil for a `%` not followed
    /// by two hex digits, or bytes that are not UTF-8.
    static func decode(_ text: Substring, plusIsSpace: Bool) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hex), let low = iterator.next().flatMap(hex) else { return nil }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
