import Foundation
import QuireNews

/// A hand-written binary writer and reader for `Article`: the floor any generic encoder is
/// measured against. Fields in declaration order, no names; unsigned LEB128 varints for lengths
/// and integers, length-prefixed UTF-8 strings, one presence byte before each optional, dates as
/// zig-zag milliseconds since 1970.
enum HandCodec {
    static func encode(_ article: Article, into out: inout [UInt8]) {
        writeString(article.id, &out)
        writeOptional(article.url, &out)
        writeOptional(article.headline, &out)
        writeOptional(article.kicker, &out)
        writeOptional(article.abstract, &out)
        writeOptional(article.snippet, &out)
        writeOptional(article.leadParagraph, &out)
        writeOptional(article.source, &out)
        writeOptional(article.sourceURL, &out)
        if let date = article.publishedAt {
            out.append(1)
            let millis = Int64((date.timeIntervalSince1970 * 1000).rounded())
            writeVarint(UInt64(bitPattern: (millis << 1) ^ (millis >> 63)), &out)
        } else {
            out.append(0)
        }
        writeOptional(article.section, &out)
        writeOptional(article.subsection, &out)
        writeOptional(article.newsDesk, &out)
        writeOptional(article.printSection, &out)
        writeOptional(article.printPage, &out)
        writeOptional(article.documentType, &out)
        writeOptional(article.typeOfMaterial, &out)
        writeOptionalInt(article.wordCount, &out)
        writeOptional(article.byline, &out)
        writeArray(article.authors, &out) { writeString($0, &$1) }
        writeArray(article.keywords, &out) { keyword, out in
            writeString(keyword.name, &out)
            writeString(keyword.value, &out)
            writeOptionalInt(keyword.rank, &out)
        }
        writeArray(article.multimedia, &out) { media, out in
            writeString(media.url, &out)
            writeOptionalInt(media.width, &out)
            writeOptionalInt(media.height, &out)
            writeOptional(media.caption, &out)
            writeOptional(media.credit, &out)
            writeOptional(media.kind, &out)
        }
    }

    static func encode(_ article: Article) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1536)
        encode(article, into: &out)
        return out
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Article {
        var r = Reader(bytes: bytes)
        let article = Article(
            id: try r.string(), url: try r.optionalString(), headline: try r.optionalString(), kicker: try r.optionalString(),
            abstract: try r.optionalString(), snippet: try r.optionalString(), leadParagraph: try r.optionalString(),
            source: try r.optionalString(), sourceURL: try r.optionalString(), publishedAt: try r.optionalDate(),
            section: try r.optionalString(), subsection: try r.optionalString(), newsDesk: try r.optionalString(),
            printSection: try r.optionalString(), printPage: try r.optionalString(),
            documentType: try r.optionalString(), typeOfMaterial: try r.optionalString(),
            wordCount: try r.optionalInt(), byline: try r.optionalString(),
            authors: try r.optionalArray { r in try r.string() },
            keywords: try r.optionalArray { r in
                Keyword(name: try r.string(), value: try r.string(), rank: try r.optionalInt())
            },
            multimedia: try r.optionalArray { r in
                Media(
                    url: try r.string(), width: try r.optionalInt(), height: try r.optionalInt(),
                    caption: try r.optionalString(), credit: try r.optionalString(), kind: try r.optionalString())
            })
        guard r.offset == bytes.count else { throw BenchError("hand codec: trailing bytes") }
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
        guard let text else { return out.append(0) }
        out.append(1)
        writeString(text, &out)
    }

    /// Zig-zag, so negative numbers stay short.
    private static func writeOptionalInt(_ value: Int?, _ out: inout [UInt8]) {
        guard let value else { return out.append(0) }
        out.append(1)
        writeVarint(UInt64(bitPattern: Int64((value << 1) ^ (value >> 63))), &out)
    }

    private static func writeArray<T>(_ items: [T]?, _ out: inout [UInt8], _ element: (T, inout [UInt8]) -> Void) {
        guard let items else { return out.append(0) }
        out.append(1)
        writeVarint(UInt64(items.count), &out)
        for item in items { element(item, &out) }
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

        mutating func zigzag() throws -> Int64 {
            let raw = try varint()
            return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
        }

        mutating func optionalInt() throws -> Int? {
            try byte() == 0 ? nil : Int(try zigzag())
        }

        mutating func optionalDate() throws -> Date? {
            try byte() == 0 ? nil : Date(timeIntervalSince1970: Double(try zigzag()) / 1000)
        }

        mutating func optionalArray<T>(_ element: (inout Reader) throws -> T) throws -> [T]? {
            guard try byte() != 0 else { return nil }
            let count = Int(try varint())
            // Every element takes at least one byte: a corrupt count cannot reserve unbounded memory.
            guard count <= bytes.count - offset else { throw BenchError("hand codec: array count too large") }
            var items: [T] = []
            items.reserveCapacity(count)
            for _ in 0..<count { items.append(try element(&self)) }
            return items
        }
    }
}
