import Foundation
import Quire
import QuireFetch
import QuireNews

/// What `quire load` does, given valid options (see `LoadOptions.swift`).
///
/// Reads JSON Lines as `quire dump --format jsonl` writes them and upserts each article by id,
/// in chunked transactions: a bad line stops the load with its line number, and the chunks
/// before it stay committed; Ctrl-C stops at a chunk boundary.
enum LoadCommand {
    static let chunkSize = 5_000

    static func run(_ options: LoadOptions, context: CommandContext) async throws {
        let reader = try LineReader(path: options.path)
        let store = try OpenStore.readWrite(context.storePath, command: "load")
        defer { store.close() }
        let progress = context.progress("loading", quiet: options.quiet)
        let start = ContinuousClock.now
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = NewsDate.parse(text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a date: \(text)"))
            }
            return date
        }
        var total = 0
        var chunk: [Article] = []
        chunk.reserveCapacity(chunkSize)
        func commit() async throws {
            guard !chunk.isEmpty else { return }
            try await store.bulkInsert(chunk, into: NewsSchema.articles, options: BulkInsertOptions(chunkSize: chunkSize))
            total += chunk.count
            progress.advance(by: chunk.count)
            chunk.removeAll(keepingCapacity: true)
        }
        while let raw = try nextLine(reader, loaded: total, progress: progress) {
            guard let line = record(in: raw) else { continue }
            do {
                chunk.append(try decoder.decode(Article.self, from: Data(line)))
            } catch {
                progress.finish()
                throw RuntimeError("load", "line \(reader.lineNumber): \(describe(error)) (\(total) records loaded before it)")
            }
            if chunk.count == chunkSize {
                try await commit()
                if context.isInterrupted {
                    progress.finish()
                    throw InterruptedError(command: "load")
                }
            }
        }
        try await commit()
        progress.finish()
        if options.json {
            try context.output.line(
                JSONSummary.object([("records", .int(total)), ("seconds", .seconds(ContinuousClock.now - start))]))
        } else if !options.quiet {
            Diagnostics.write("quire: load: \(total) records\n")
        }
    }

    /// The reader's next line; Ctrl-C or a read error ends the load (the chunks committed stay).
    private static func nextLine(_ reader: LineReader, loaded: Int, progress: ProgressReporter) throws -> [UInt8]? {
        do {
            return try reader.next()
        } catch let error as RuntimeError {
            progress.finish()
            throw RuntimeError(error.what, "\(error.why) (\(loaded) records loaded before it)")
        } catch {
            progress.finish()
            throw error
        }
    }

    /// The JSON object on a line, or nil for a line without one. Besides JSON Lines this reads
    /// what `dump --format json` writes: `[` and `]` on their own lines, a comma between records.
    static func record(in line: [UInt8]) -> ArraySlice<UInt8>? {
        func isSpace(_ b: UInt8) -> Bool { b == 32 || b == 9 || b == 13 }
        var slice = line[...]
        while let first = slice.first, isSpace(first) { slice = slice.dropFirst() }
        while let last = slice.last, isSpace(last) { slice = slice.dropLast() }
        if slice.first == UInt8(ascii: "[") && slice.count == 1 { return nil }
        if slice.first == UInt8(ascii: "]") && slice.count == 1 { return nil }
        if slice.first == UInt8(ascii: ",") { slice = slice.dropFirst() }
        if slice.last == UInt8(ascii: ",") { slice = slice.dropLast() }
        return slice.isEmpty ? nil : slice
    }

    /// A decoding error in one line, naming the field.
    static func describe(_ error: any Error) -> String {
        guard let decoding = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            let p = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return p.hasPrefix(".") ? String(p.dropFirst()) : p
        }
        switch decoding {
        case .dataCorrupted(let c):
            return c.codingPath.isEmpty ? "not valid JSON" : "\(path(c)): \(c.debugDescription)"
        case .keyNotFound(let key, let c):
            let prefix = path(c)
            return "missing field '\(prefix.isEmpty ? key.stringValue : prefix + "." + key.stringValue)'"
        case .typeMismatch(let type, let c): return "\(path(c)): expected \(type)"
        case .valueNotFound(let type, let c): return "\(path(c)): expected \(type), found null"
        @unknown default: return "\(error)"
        }
    }
}
