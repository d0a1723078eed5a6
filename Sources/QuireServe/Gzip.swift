internal import CZlib

/// gzip (RFC 1952) through Debian's zlib, for responses to clients that send
/// `Accept-Encoding: gzip`.
enum Gzip {
    /// `bytes` compressed at level 6 (zlib's default), or nil if zlib failed.
    static func compress(_ bytes: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        guard czlib_deflate_init_gzip(&stream, 6) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))) + 32)
        let status: Int32 = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        output.removeSubrange(Int(stream.total_out)...)
        return output
    }

    /// Whether an `Accept-Encoding` value accepts gzip (a `gzip;q=0` refuses it).
    static func isAccepted(by acceptEncoding: String?) -> Bool {
        guard let acceptEncoding else { return false }
        for part in acceptEncoding.split(separator: ",") {
            let pieces = part.split(separator: ";").map { $0.strippingCharacters(" \t") }
            guard let coding = pieces.first?.lowercased(), coding == "gzip" || coding == "x-gzip" else { continue }
            let q = pieces.dropFirst().first { $0.lowercased().hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return q > 0
        }
        return false
    }
}

extension StringProtocol {
    /// The string without leading and trailing characters of `set`.
    func strippingCharacters(_ set: String) -> String {
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice.removeFirst() }
        while let last = slice.last, set.contains(last) { slice.removeLast() }
        return String(slice)
    }
}
