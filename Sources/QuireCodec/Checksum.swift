internal import CChecksum

/// CRC-32C (Castagnoli), the checksum of version 2 payloads (see docs/FORMAT.md, "Checksum").
///
/// A CRC detects every change of up to 32 consecutive bits, so any one damaged byte of a record
/// is always found, and most larger damage too (all but one in 2³² at random). Computed with
/// the processor's CRC-32C instruction where there is one (SSE 4.2, ARMv8 CRC), else eight
/// bytes at a time from tables ("slicing by 8").
package enum Checksum {
    /// Whether the processor computes CRC-32C itself (asked once).
    private static let hasHardware = quire_crc32c_hardware() != 0

    /// The reflected Castagnoli polynomial.
    private static let polynomial: UInt32 = 0x82F6_3B78

    /// Eight tables of 256 entries: table 0 is the classic byte table, table k advances by k bytes.
    private static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var crc = UInt32(i)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ polynomial : crc >> 1 }
            t[i] = crc
        }
        for k in 1..<8 {
            for i in 0..<256 {
                let previous = t[(k - 1) * 256 + i]
                t[k * 256 + i] = (previous >> 8) ^ t[Int(previous & 0xFF)]
            }
        }
        return t
    }()

    /// The CRC-32C of `bytes`, continuing from `crc` (0 to start). For other layers' own
    /// checksums (the store's field table).
    package static func crc32c(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress else { return crc }
        if hasHardware { return ~quire_crc32c_update(~crc, base, bytes.count) }
        return tableCRC32C(bytes, continuing: crc)
    }

    /// The table-driven CRC-32C, used without the instruction (and to test it).
    static func tableCRC32C(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var crc = ~crc
        guard var p = bytes.baseAddress else { return ~crc }
        var n = bytes.count
        tables.withUnsafeBufferPointer { t in
            while n >= 8 {
                let word = p.loadUnaligned(as: UInt64.self).littleEndian ^ UInt64(crc)
                crc =
                    t[7 * 256 + Int(word & 0xFF)] ^ t[6 * 256 + Int((word >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((word >> 16) & 0xFF)] ^ t[4 * 256 + Int((word >> 24) & 0xFF)]
                    ^ t[3 * 256 + Int((word >> 32) & 0xFF)] ^ t[2 * 256 + Int((word >> 40) & 0xFF)]
                    ^ t[1 * 256 + Int((word >> 48) & 0xFF)] ^ t[Int(word >> 56)]
                p += 8
                n -= 8
            }
            while n > 0 {
                crc = (crc >> 8) ^ t[Int((crc ^ UInt32(p.load(as: UInt8.self))) & 0xFF)]
                p += 1
                n -= 1
            }
        }
        return ~crc
    }

    /// The checksum a version 2 payload stores: over its header byte and every byte after the
    /// four checksum bytes.
    static func payloadChecksum(_ payload: UnsafeRawBufferPointer) -> UInt32 {
        let header = crc32c(UnsafeRawBufferPointer(rebasing: payload[0..<1]))
        return crc32c(UnsafeRawBufferPointer(rebasing: payload[FormatHeader.checkedBodyStart...]), continuing: header)
    }

    /// Writes the checksum of a version 2 payload into its bytes 1–4 (little-endian).
    static func seal(_ payload: inout [UInt8]) {
        let crc = payload.withUnsafeBytes { payloadChecksum($0) }
        for i in 0..<4 { payload[1 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
    }

    /// The checksum stored in bytes 1–4 of a version 2 payload (at least 5 bytes long).
    static func stored(in payload: UnsafeRawBufferPointer) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(payload[1 + $1]) << (8 * UInt32($1)) }
    }
}
