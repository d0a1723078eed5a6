/// One record's index keys in a bulk chunk, as one run of bytes in the chunk's arena: for each of
/// the collection's indexes in order, the number of keys, then each key's length and bytes (all
/// counts LEB128 varints; keys in their stored form).
///
/// Kept as nested arrays, a record's keys cost five heap allocations of about 50 bytes each: in
/// a held sort window of compressed articles that was a third of the window again.
struct IndexKeyBytes: Sendable {
    let bytes: ArenaBytes

    /// Appends one index's keys to `scratch`, the bytes of the record being built.
    static func appendList(_ keys: [[UInt8]], to scratch: inout [UInt8]) {
        appendVarint(keys.count, to: &scratch)
        for key in keys {
            appendVarint(key.count, to: &scratch)
            scratch += key
        }
    }

    private static func appendVarint(_ value: Int, to out: inout [UInt8]) {
        var v = UInt(value)
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    /// Calls `body` with each key and the position of its index, index by index.
    func forEach(_ body: (_ index: Int, _ key: UnsafeRawBufferPointer) throws -> Void) rethrows {
        let buffer = bytes.buffer
        var offset = 0
        func varint() -> Int {
            var value = 0
            var shift = 0
            while true {
                let byte = buffer[offset]
                offset += 1
                value |= Int(byte & 0x7f) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }
        var index = 0
        while offset < buffer.count {
            for _ in 0..<varint() {
                let count = varint()
                try body(index, UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count]))
                offset += count
            }
            index += 1
        }
    }

    /// True when the index at position `index` has `key` among this record's keys.
    func contains(_ key: [UInt8], inIndex index: Int) -> Bool {
        var found = false
        forEach { i, k in
            if i == index && !found && k.elementsEqual(key) { found = true }
        }
        return found
    }
}
