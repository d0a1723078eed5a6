import Foundation

/// Appends compact values to one growing byte array; the only place bytes are written.
struct ByteWriter {
    var bytes: [UInt8]

    init(capacity: Int = 512) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inline(__always) mutating func byte(_ value: UInt8) { bytes.append(value) }

    @inline(__always) mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    @inline(__always) mutating func kind(_ kind: ValueKind) { bytes.append(kind.rawValue) }

    mutating func null() { kind(.null) }
    mutating func bool(_ value: Bool) { kind(value ? .trueValue : .falseValue) }

    @inline(__always) mutating func int(_ value: Int64) {
        kind(.int)
        varint(zigzag(value))
    }

    @inline(__always) mutating func uint(_ value: UInt64) {
        kind(.uint)
        varint(value)
    }

    mutating func double(_ value: Double) {
        kind(.float64)
        littleEndian(value.bitPattern)
    }

    mutating func float(_ value: Float) {
        kind(.float32)
        littleEndian(value.bitPattern)
    }

    @inline(__always) mutating func littleEndian<I: FixedWidthInteger>(_ value: I) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    @inline(__always) mutating func string(_ value: String, kind: ValueKind = .string) {
        self.kind(kind)
        rawString(value)
    }

    /// Length-prefixed UTF-8 without a kind tag (used for names and values alike).
    @inline(__always) mutating func rawString(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: UnsafeRawBufferPointer(utf8))
        }
    }

    mutating func data<C: Collection<UInt8>>(_ value: C) {
        kind(.bytes)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    mutating func date(_ value: Date) {
        // Whole milliseconds (the common case for API dates) take 6 bytes; anything finer keeps full precision.
        let seconds = value.timeIntervalSince1970
        let millis = (seconds * 1000).rounded()
        if millis.magnitude < 9.0e15, Date(timeIntervalSince1970: millis / 1000) == value {
            kind(.dateMillis)
            varint(zigzag(Int64(millis)))
        } else {
            kind(.dateSeconds)
            littleEndian(value.timeIntervalSinceReferenceDate.bitPattern)
        }
    }

    /// Starts a container: its tag and a one-byte length slot that ``closeContainer(at:)`` fills.
    @inline(__always) mutating func openContainer(_ kind: ValueKind) -> Int {
        let start = bytes.count
        bytes.append(kind.rawValue)
        bytes.append(0)
        return start
    }

    /// Writes the body length of the container whose tag is at `start`, widening the slot when needed.
    mutating func closeContainer(at start: Int) {
        let bodyStart = start + 2
        let length = bytes.count - bodyStart
        if length < 0x80 {
            bytes[start + 1] = UInt8(length)
            return
        }
        var width = 1
        var rest = length >> 7
        while rest > 0 {
            width += 1
            rest >>= 7
        }
        let extra = width - 1
        bytes.append(contentsOf: repeatElement(0, count: extra))
        bytes.withUnsafeMutableBytes { raw in
            let base = raw.baseAddress!
            memmove(base + bodyStart + extra, base + bodyStart, length)
            var value = length
            var index = start + 1
            while value >= 0x80 {
                raw[index] = UInt8(truncatingIfNeeded: value) | 0x80
                value >>= 7
                index += 1
            }
            raw[index] = UInt8(value)
        }
    }
}
