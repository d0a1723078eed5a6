#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import QuireCodec

/// A bulk load's sorted runs, each a full sort window written out, in an unnamed temporary file
/// in the store's directory: what lets a load of any size write its records in one ascending
/// pass at the end (``SpilledRunMerger``) instead of one pass over the stored tree per window.
/// (The full-text compaction holds key/value pairs in one the same way, ``appendPairs(_:)``.)
///
/// The file is unlinked as soon as it is created, so it takes disk only while the load holds it
/// open and nothing is left behind by a killed process. Each record is a 16-byte header (the
/// little-endian 32-bit lengths of the key, the record and the index keys, and the input values
/// it stands for) followed by those bytes; nothing in it is read by anything but this load.
final class SpillFile {
    /// One spilled window: where its records are and what they need to be written.
    struct Run {
        var offset: Int
        var byteCount: Int
        var records: Int
        /// Input values the run stands for (more than `records` when keys repeated).
        var inputCount: Int
        var firstKey: [UInt8]
        /// The table the run's records are encoded with; each run's extends the one before.
        var fields: FieldTable
        var longKeys: [LongKeyPair]
    }

    static let headerSize = 16

    private let descriptor: Int32
    let directory: String
    private(set) var runs: [Run] = []
    /// Bytes of complete runs; a run that failed to write is overwritten by the next one.
    private(set) var size = 0
    private var buffer: [UInt8] = []

    /// - Throws: `StoreError` (`.storage`) when the directory has no room for a file.
    init(directory: String) throws {
        var template = Array((directory + "/.quire-sort-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw StoreError(.storage, "cannot create a temporary file in \(directory) for a bulk load's sorted runs: \(Self.reason(errno))")
        }
        _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }  // gone on close, even when killed
        descriptor = fd
        self.directory = directory
    }

    deinit { close(descriptor) }

    /// Writes everything `merger` gives as one run, sorted by key, each key once.
    /// - Throws: `StoreError` (`.storage`) when the disk is full or fails; no run is added then.
    func appendRun(_ merger: inout SortedRunMerger) throws {
        var run = Run(
            offset: size, byteCount: 0, records: 0, inputCount: 0, firstKey: [], fields: merger.fields,
            longKeys: merger.allLongKeys)
        var written = size
        buffer.removeAll(keepingCapacity: true)
        buffer.reserveCapacity(Self.bufferSize + (64 << 10))
        try merger.forEachRecord { entry, indexKeys, consumed in
            if run.records == 0 { run.firstKey = entry.key.array }
            let index = indexKeys?.bytes.buffer ?? UnsafeRawBufferPointer(start: nil, count: 0)
            appendLength(entry.key.count)
            appendLength(entry.record.count)
            appendLength(index.count)
            appendLength(consumed)
            buffer += entry.key.buffer
            buffer += entry.record.buffer
            buffer += index
            run.records += 1
            run.inputCount += consumed
            if buffer.count >= Self.bufferSize { try flush(at: &written) }
        }
        try flush(at: &written)
        run.byteCount = written - size
        size = written
        runs.append(run)
    }

    /// Writes the pairs `produce` emits as one stretch of the file (each a 16-byte header, as a
    /// run's records: the key's and the value's lengths, then zeros; then the bytes), to be read
    /// back in order by ``forEachPair(in:_:)``: the full-text compaction holds an index's
    /// posting blocks here while it rewrites them.
    /// - Throws: `StoreError` (`.storage`) when the disk is full or fails.
    func appendPairs(
        _ produce: (_ emit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws -> Void
    ) throws {
        var written = size
        buffer.removeAll(keepingCapacity: true)
        buffer.reserveCapacity(Self.bufferSize + (64 << 10))
        try produce { key, value in
            appendLength(key.count)
            appendLength(value.count)
            appendLength(0)
            appendLength(0)
            buffer += key
            buffer += value
            if buffer.count >= Self.bufferSize { try flush(at: &written) }
        }
        try flush(at: &written)
        size = written
    }

    /// Calls `body` with each pair ``appendPairs(_:)`` wrote into the mapped `arena`, in order.
    static func forEachPair(
        in arena: RecordArena, size: Int, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
    ) rethrows {
        _ = try forEachPair(in: arena, size: size, from: 0, bytes: .max, body)
    }

    /// Calls `body` with the pairs from byte `offset` (a pair's start) until about `bytes` have
    /// been read (at least one pair); returns where the next pair starts (`size` at the end).
    static func forEachPair(
        in arena: RecordArena, size: Int, from offset: Int, bytes: Int,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
    ) rethrows -> Int {
        guard let start = arena.firstBlockStart else { return size }
        var at = offset
        func length(_ offset: Int) -> Int {
            Int(UInt32(littleEndian: start.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        }
        while at + headerSize <= size, at == offset || at - offset < bytes {
            let keyCount = length(at)
            let valueCount = length(at + 4)
            let key = UnsafeRawBufferPointer(start: start + at + headerSize, count: keyCount)
            let value = UnsafeRawBufferPointer(start: start + at + headerSize + keyCount, count: valueCount)
            try body(key, value)
            at += headerSize + keyCount + valueCount
        }
        return at + headerSize <= size ? at : size
    }

    /// The runs' bytes, mapped read-only.
    func mapped() throws -> RecordArena {
        try RecordArena(mappingFile: descriptor, size: size)
    }

    /// Drops the file's pages in `range` from the page cache once the final merge has written
    /// them: at ten million articles the runs are as large as the store, and their cached pages
    /// would push out the store's own (point gets right after a 10M load ran at 0.38× their 100k
    /// rate).
    func dropCachedPages(_ range: Range<Int>) {
        #if os(Linux)
        _ = posix_fadvise(descriptor, off_t(range.lowerBound), off_t(range.count), POSIX_FADV_DONTNEED)
        #endif
    }

    private static var bufferSize: Int { 4 << 20 }

    private func appendLength(_ value: Int) {
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian) { buffer += $0 }
    }

    private func flush(at offset: inout Int) throws {
        try buffer.withUnsafeBytes { bytes in
            var done = 0
            while done < bytes.count {
                let n = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    throw StoreError(
                        .storage, "cannot write a bulk load's sorted run to a temporary file in \(directory): \(Self.reason(n < 0 ? errno : ENOSPC))")
                }
                done += n
            }
        }
        offset += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }

    private static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}
