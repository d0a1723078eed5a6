import Foundation

/// A hand-written binary writer and reader for `BenchArticle`: the floor any generic encoder is
/// measured against. Fields in declaration order; unsigned LEB128 varints for lengths and
/// integers, length-prefixed UTF-8 strings, one presence byte before each optional, the date as
/// zig-zag milliseconds since 1970.
enum HandCodec {
    static func encode(_ article: BenchArticle, into out: inout [UInt8]) {
        writeString(article.id, &out)
        writeString(article.webURL, &out)
        writeString(article.headline, &out)
        writeOptional(article.kicker, &out)
        writeOptional(article.abstract, &out)
        writeString(article.snippet, &out)
        writeOptional(article.leadParagraph, &out)
        writeString(article.source, &out)
        writeString(article.section, &out)
        writeOptional(article.subsection, &out)
        writeOptional(article.byline, &out)
        writeString(article.documentType, &out)
        writeString(article.newsDesk, &out)
        writeString(article.typeOfMaterial, &out)
        let millis = Int64((article.publishedAt.timeIntervalSince1970 * 1000).rounded())
        writeVarint(UInt64(bitPattern: (millis << 1) ^ (millis >> 63)), &out)
        writeVarint(UInt64(article.wordCount), &out)
        writeVarint(UInt64(article.keywords.count), &out)
        for keyword in article.keywords {
            writeString(keyword.name, &out)
            writeString(keyword.value, &out)
            writeVarint(UInt64(keyword.rank), &out)
        }
    }

    static func encode(_ article: BenchArticle) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        encode(article, into: &out)
        return out
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> BenchArticle {
        var reader = Reader(bytes: bytes)
        let article = BenchArticle(
            id: try reader.string(),
            webURL: try reader.string(),
            headline: try reader.string(),
            kicker: try reader.optionalString(),
            abstract: try reader.optionalString(),
            snippet: try reader.string(),
            leadParagraph: try reader.optionalString(),
            source: try reader.string(),
            section: try reader.string(),
            subsection: try reader.optionalString(),
            byline: try reader.optionalString(),
            documentType: try reader.string(),
            newsDesk: try reader.string(),
            typeOfMaterial: try reader.string(),
            publishedAt: try reader.date(),
            wordCount: Int(try reader.varint()),
            keywords: try reader.keywords())
        guard reader.offset == bytes.count else { throw BenchError("hand codec: trailing bytes") }
        return article
    }

    private static func writeVarint(_ value: UInt64, _ out: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        out.append(UInt8(value))
    }

    private static func writeString(_ text: String, _ out: inout [UInt8]) {
        var text = text
        text.withUTF8 { utf8 in
            writeVarint(UInt64(utf8.count), &out)
            out.append(contentsOf: utf8)
        }
    }

    private static func writeOptional(_ text: String?, _ out: inout [UInt8]) {
        guard let text else {
            out.append(0)
            return
        }
        out.append(1)
        writeString(text, &out)
    }

    /// A bounds-checked cursor over the encoded bytes.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        mutating func byte() throws -> UInt8 {
            guard offset < bytes.count else { throw BenchError("hand codec: truncated") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func varint() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let next = try byte()
                value |= UInt64(next & 0x7F) << shift
                if next < 0x80 { return value }
                shift += 7
                guard shift < 64 else { throw BenchError("hand codec: varint too long") }
            }
        }

        mutating func string() throws -> String {
            let count = Int(try varint())
            guard count <= bytes.count - offset else { throw BenchError("hand codec: truncated string") }
            let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
            offset += count
            guard let text = String(validating: slice, as: UTF8.self) else { throw BenchError("hand codec: bad UTF-8") }
            return text
        }

        mutating func optionalString() throws -> String? {
            try byte() == 0 ? nil : try string()
        }

        mutating func date() throws -> Date {
            let zigzag = try varint()
            let millis = Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
            return Date(timeIntervalSince1970: Double(millis) / 1000)
        }

        mutating func keywords() throws -> [BenchArticle.Keyword] {
            let count = Int(try varint())
            guard count <= bytes.count - offset else { throw BenchError("hand codec: too many keywords") }
            var keywords: [BenchArticle.Keyword] = []
            keywords.reserveCapacity(count)
            for _ in 0..<count {
                keywords.append(.init(name: try string(), value: try string(), rank: Int(try varint())))
            }
            return keywords
        }
    }
}
