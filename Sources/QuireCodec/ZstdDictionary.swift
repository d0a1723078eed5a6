internal import CZstd
import Synchronization

/// Zstandard dictionaries for compressing many small, similar records (such as one store's articles).
///
/// Train once on a sample of records, keep the bytes (a store keeps them beside its field table), and
/// give the same bytes to ``CompactEncoder/Compression/dictionary`` and
/// the decoder options of the records (a store does that itself).
public enum ZstdDictionary {
    /// Errors from training.
    public struct TrainingError: Error, Sendable, CustomStringConvertible {
        /// The reason reported by zstd (for example too few or too small samples).
        public let reason: String
        public var description: String { "zstd dictionary training failed: \(reason)" }
    }

    /// Trains a dictionary of at most `capacity` bytes on sample records.
    ///
    /// zstd wants many samples (hundreds or more) whose total size is well above `capacity`.
    /// The corresponding C function is `ZDICT_trainFromBuffer`.
    /// - Throws: ``TrainingError`` when zstd cannot build a dictionary from the samples.
    public static func train(samples: [[UInt8]], capacity: Int = 16 * 1024) throws -> [UInt8] {
        guard !samples.isEmpty, capacity > 0 else { throw TrainingError(reason: "no samples or zero capacity") }
        var joined: [UInt8] = []
        joined.reserveCapacity(samples.reduce(0) { $0 + $1.count })
        var sizes: [Int] = []
        sizes.reserveCapacity(samples.count)
        for sample in samples {
            joined.append(contentsOf: sample)
            sizes.append(sample.count)
        }
        // Past 16 MiB, no larger than its samples: a capacity of `.max` ("no limit") trapped
        // allocating it. zstd is told the buffer's own size.
        var dictionary = [UInt8](repeating: 0, count: min(capacity, max(joined.count, 16 << 20)))
        let result = dictionary.withUnsafeMutableBytes { out in
            joined.withUnsafeBytes { input in
                sizes.withUnsafeBufferPointer { sizes in
                    ZDICT_trainFromBuffer(
                        out.baseAddress, out.count, input.baseAddress, sizes.baseAddress, UInt32(sizes.count))
                }
            }
        }
        if ZDICT_isError(result) != 0 {
            throw TrainingError(reason: String(cString: ZDICT_getErrorName(result)))
        }
        dictionary.removeSubrange(result...)
        return dictionary
    }
}

/// A digested compression dictionary, created once per encoder.
final class ZstdCompressor: @unchecked Sendable {
    // @unchecked: `cdict` is immutable after init; zstd: "ZSTD_CDict can be created once and shared by
    // multiple threads concurrently, since its usage is read-only." A context is used by one call at a
    // time: calls borrow one from the pool and give it back.
    private let cdict: OpaquePointer?
    private let contexts = ContextPool(free: { ZSTD_freeCCtx($0) })
    let level: Int32
    var hasDictionary: Bool { cdict != nil }

    init(level: Int32, dictionary: [UInt8]?) {
        self.level = level
        if let dictionary, !dictionary.isEmpty {
            cdict = dictionary.withUnsafeBytes { ZSTD_createCDict($0.baseAddress, $0.count, level) }
        } else {
            cdict = nil
        }
    }

    deinit { if let cdict { ZSTD_freeCDict(cdict) } }

    /// Compresses `input`, or returns nil when zstd fails (the caller then stores it uncompressed).
    func compress(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        let bound = ZSTD_compressBound(input.count)
        var output = [UInt8](repeating: 0, count: bound)
        guard let cctx = contexts.take() ?? newContext() else { return nil }
        defer { contexts.give(cctx) }
        let written = output.withUnsafeMutableBytes { out in
            ZSTD_compress2(cctx, out.baseAddress, bound, input.baseAddress, input.count)
        }
        guard ZSTD_isError(written) == 0 else { return nil }
        output.removeSubrange(written...)
        return output
    }

    /// A context set up for this compressor (its parameters stay for every frame it writes).
    /// Frames leave out their content size and dictionary id: a payload keeps its size before the
    /// frame and flags its dictionary, the one its collection has. 6 bytes of a record's ≈ 550.
    /// Decoders read frames with or without them alike.
    private func newContext() -> OpaquePointer? {
        guard let cctx = ZSTD_createCCtx() else { return nil }
        let settings = [
            ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0),
            ZSTD_CCtx_setParameter(cctx, ZSTD_c_dictIDFlag, 0),
            cdict.map { ZSTD_CCtx_refCDict(cctx, $0) } ?? ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level),
        ]
        guard settings.allSatisfy({ ZSTD_isError($0) == 0 }) else {
            ZSTD_freeCCtx(cctx)
            return nil
        }
        return cctx
    }
}

/// A digested decompression dictionary, created once per decoder.
final class ZstdDecompressor: @unchecked Sendable {
    // @unchecked: `ddict` is immutable after init and only read by zstd (shareable like a CDict).
    private let ddict: OpaquePointer?
    private let contexts = ContextPool(free: { ZSTD_freeDCtx($0) })
    /// The dictionary's bytes, as given.
    let dictionary: [UInt8]

    /// The process-wide decompressor for payloads compressed without a dictionary.
    static let plain = ZstdDecompressor(dictionary: nil)

    init(dictionary: [UInt8]?) {
        self.dictionary = dictionary ?? []
        if let dictionary, !dictionary.isEmpty {
            ddict = dictionary.withUnsafeBytes { ZSTD_createDDict($0.baseAddress, $0.count) }
        } else {
            ddict = nil
        }
    }

    deinit { if let ddict { ZSTD_freeDDict(ddict) } }

    /// Decompresses a frame that must produce exactly `expectedSize` bytes (so output is bounded).
    func decompress(_ frame: UnsafeRawBufferPointer, expectedSize: Int, needsDictionary: Bool) throws(CompactDecodingError) -> [UInt8] {
        try [UInt8](unsafeUninitializedCapacity: expectedSize) { buffer, count throws(CompactDecodingError) in
            try decompress(frame, into: UnsafeMutableRawBufferPointer(buffer), needsDictionary: needsDictionary)
            count = expectedSize
        }
    }

    /// Decompresses a frame that must fill `output` exactly: the caller's buffer, which may be
    /// uninitialized (a record's decode decompresses into temporary memory, not a new array).
    func decompress(
        _ frame: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, needsDictionary: Bool
    ) throws(CompactDecodingError) {
        if needsDictionary && ddict == nil {
            throw CompactDecodingError(.decompressionFailed("the payload needs a dictionary and none was given"))
        }
        guard let dctx = contexts.take() ?? ZSTD_createDCtx() else {
            throw CompactDecodingError(.decompressionFailed("out of memory"))
        }
        defer { contexts.give(dctx) }
        let expectedSize = output.count
        let written =
            if needsDictionary, let ddict {
                ZSTD_decompress_usingDDict(dctx, output.baseAddress, expectedSize, frame.baseAddress, frame.count, ddict)
            } else {
                ZSTD_decompressDCtx(dctx, output.baseAddress, expectedSize, frame.baseAddress, frame.count)
            }
        if ZSTD_isError(written) != 0 {
            throw CompactDecodingError(.decompressionFailed(String(cString: ZSTD_getErrorName(written))))
        }
        guard written == expectedSize else {
            throw CompactDecodingError(.decompressionFailed("frame gave \(written) bytes, header said \(expectedSize)"))
        }
    }
}

/// Idle zstd contexts, reused across calls: creating a context costs more than compressing a small record.
final class ContextPool: Sendable {
    /// A context pointer; only one call uses a context at a time (it is out of the pool meanwhile).
    private struct Context: @unchecked Sendable { let pointer: OpaquePointer }

    private let idle = Locked<[Context]>([])
    private let free: @Sendable (OpaquePointer) -> Void
    /// More idle contexts than this are freed, bounding memory after a burst of concurrent calls.
    private let limit = 8

    init(free: @escaping @Sendable (OpaquePointer) -> Void) { self.free = free }

    deinit {
        idle.withLock { contexts in
            for context in contexts { free(context.pointer) }
        }
    }

    func take() -> OpaquePointer? { idle.withLock { $0.popLast()?.pointer } }

    func give(_ pointer: OpaquePointer) {
        let kept = idle.withLock { contexts in
            guard contexts.count < limit else { return false }
            contexts.append(Context(pointer: pointer))
            return true
        }
        if !kept { free(pointer) }
    }
}
