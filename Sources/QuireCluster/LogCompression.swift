internal import CZstd

/// zstd frames for log entries: etcd's request size and storage quota are per byte, and news
/// text compresses to about half.
enum LogCompression {
    /// The level: fast enough not to slow a fetcher, most of the gain of higher ones on JSON.
    static let level: Int32 = 3
    /// The largest entry a replica decompresses (a page split keeps entries far below it).
    static let maxDecompressedBytes = 64 << 20

    static func compress(_ input: [UInt8]) -> [UInt8] {
        let bound = ZSTD_compressBound(input.count)
        var output = [UInt8](repeating: 0, count: bound)
        let written = input.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { out in
                ZSTD_compress(out.baseAddress, bound, source.baseAddress, source.count, level)
            }
        }
        // > ZSTD_compress: "@return : compressed size written into `dst` (<= `dstCapacity),
        // > or an error code if it fails (which can be tested using ZSTD_isError())."
        precondition(ZSTD_isError(written) == 0, "zstd failed with a buffer of ZSTD_compressBound bytes")
        output.removeSubrange(written...)
        return output
    }

    static func decompress(_ frame: [UInt8]) throws(ClusterError) -> [UInt8] {
        let size = frame.withUnsafeBytes { ZSTD_getFrameContentSize($0.baseAddress, $0.count) }
        // ZSTD_CONTENTSIZE_UNKNOWN and _ERROR are the two largest values; both are refused here.
        guard size <= UInt64(maxDecompressedBytes) else {
            throw ClusterError(.corruptLogEntry, "a log entry's zstd frame has no valid size")
        }
        var output = [UInt8](repeating: 0, count: Int(size))
        let written = frame.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { out in
                ZSTD_decompress(out.baseAddress, out.count, source.baseAddress, source.count)
            }
        }
        guard ZSTD_isError(written) == 0, written == Int(size) else {
            throw ClusterError(.corruptLogEntry, "a log entry's zstd frame does not decompress")
        }
        return output
    }
}
