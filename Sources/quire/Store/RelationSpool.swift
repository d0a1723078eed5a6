import Foundation

/// The relation entries of a whole-store dump, held in an unnamed temporary file in the
/// store's directory until the articles they name are loaded: `dump --all` writes the relations before the
/// articles, and entries committed first would name articles that a load stopped part way (a
/// signal, a bad line, a cut file) never stored.
///
/// Each entry keeps its input line, so an entry naming an article the store does not hold is
/// reported at its line when the spool is written.
final class RelationSpool {
    struct Entry {
        var section: Int
        var line: Int
        var owner: String
        var member: String
    }

    private let descriptor: Int32
    private let directory: String
    private var buffer: [UInt8] = []
    private var size = 0
    private(set) var count = 0
    private static let bufferSize = 1 << 20

    /// - Throws: `RuntimeError` when the directory has no room for a file.
    init(directory: String) throws {
        var template = Array((directory + "/.quire-relations-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw RuntimeError("load", "cannot create a temporary file in \(directory): \(String(cString: strerror(errno)))")
        }
        _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }  // gone on close, even when killed
        descriptor = fd
        self.directory = directory
    }

    deinit { close(descriptor) }

    func append(_ entry: Entry) throws {
        appendNumber(entry.section)
        appendNumber(entry.line)
        appendNumber(entry.owner.utf8.count)
        buffer += entry.owner.utf8
        appendNumber(entry.member.utf8.count)
        buffer += entry.member.utf8
        count += 1
        if buffer.count >= Self.bufferSize { try flush() }
    }

    private var readOffset = 0
    private var pending: [UInt8] = []
    private var pendingStart = 0

    /// The next entries in the order appended, at most `limit`; empty at the end. The first
    /// call ends the writing.
    func next(upTo limit: Int) throws -> [Entry] {
        if !buffer.isEmpty { try flush() }
        var out: [Entry] = []
        while out.count < limit {
            if let (entry, next) = Self.entry(in: pending, at: pendingStart) {
                out.append(entry)
                pendingStart = next
                continue
            }
            guard readOffset < size else { break }
            pending.removeFirst(pendingStart)
            pendingStart = 0
            var block = [UInt8](repeating: 0, count: Self.bufferSize)
            let read = block.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(readOffset)) }
            guard read > 0 else { throw failure("reading") }
            readOffset += read
            pending += block[..<read]
        }
        return out
    }

    /// The entry at `start`, and where the next begins; nil when the bytes end inside it.
    private static func entry(in bytes: [UInt8], at start: Int) -> (Entry, Int)? {
        var at = start
        func number() -> Int? {
            guard at + 8 <= bytes.count else { return nil }
            var value = 0
            for i in 0..<8 { value |= Int(bytes[at + i]) << (8 * i) }
            at += 8
            return value
        }
        func text() -> String? {
            guard let length = number(), at + length <= bytes.count else { return nil }
            defer { at += length }
            return String(decoding: bytes[at..<at + length], as: UTF8.self)
        }
        guard let section = number(), let line = number(), let owner = text(), let member = text() else { return nil }
        return (Entry(section: section, line: line, owner: owner, member: member), at)
    }

    private func appendNumber(_ value: Int) {
        for i in 0..<8 { buffer.append(UInt8(truncatingIfNeeded: value >> (8 * i))) }
    }

    private func flush() throws {
        var written = 0
        while written < buffer.count {
            let n = buffer.withUnsafeBytes { pwrite(descriptor, $0.baseAddress! + written, $0.count - written, off_t(size + written)) }
            guard n > 0 else { throw failure("writing") }
            written += n
        }
        size += written
        buffer.removeAll(keepingCapacity: true)
    }

    private func failure(_ doing: String) -> RuntimeError {
        RuntimeError("load", "\(doing) the relations' temporary file in \(directory) failed: \(String(cString: strerror(errno)))")
    }
}
