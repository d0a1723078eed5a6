/// Remembers the field-table ids of the interned values written with one field table, so that
/// writing a value again costs a cheap hash of its bytes and one comparison, instead of building
/// its table entry (prefix + value) and hashing that with `String`'s hasher.
///
/// It lives with the key caches of ``EncoderMemo``, which are reused only with the very table
/// (same storage) they were made against, so the ids stay right. A value the table refused (its
/// ``FieldTable/internedValueLimit`` was reached) is remembered as refused: a table only grows, so
/// the limit stays reached.
final class InternedValueCache {
    /// A value the table refused to intern.
    static let refused = UInt32.max
    /// At most this many values are remembered; others are looked up in the table each time.
    static let capacityLimit = 4 * FieldTable.internedValueLimit

    private struct Slot {
        var hash: UInt64 = 0
        var offset: Int32 = 0
        /// 0 for an empty slot (interned values are never empty).
        var length: Int32 = 0
        var id: UInt32 = 0
    }

    @exclusivity(unchecked) private var slots = [Slot](repeating: Slot(), count: 64)
    /// The bytes of the remembered values, one after another.
    @exclusivity(unchecked) private var arena: [UInt8] = []
    @exclusivity(unchecked) private var count = 0

    @inline(__always) static func hash(_ utf8: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let raw = UnsafeRawPointer(utf8.baseAddress!)
        let n = utf8.count
        var h = UInt64(n) &* 0x9E37_79B9_7F4A_7C15
        var i = 0
        while i + 8 <= n {
            h = (h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
            h ^= h >> 29
            i += 8
        }
        if i < n {
            var tail: UInt64 = 0
            withUnsafeMutableBytes(of: &tail) { $0.baseAddress!.copyMemory(from: raw + i, byteCount: n - i) }
            h = (h ^ tail) &* 0x94D0_49BB_1331_11EB
        }
        return h ^ (h >> 32)
    }

    /// The remembered id of the value (``refused`` when refused), or nil when not remembered.
    @inline(__always) func id(of utf8: UnsafeBufferPointer<UInt8>, hash: UInt64) -> UInt32? {
        let mask = slots.count - 1
        var index = Int(truncatingIfNeeded: hash) & mask
        return slots.withUnsafeBufferPointer { slots in
            arena.withUnsafeBufferPointer { arena in
                while true {
                    let slot = slots[index]
                    if slot.length == 0 { return nil }
                    if slot.hash == hash && Int(slot.length) == utf8.count
                        && memcmp(arena.baseAddress! + Int(slot.offset), utf8.baseAddress!, utf8.count) == 0
                    {
                        return slot.id
                    }
                    index = (index + 1) & mask
                }
            }
        }
    }

    /// Remembers the id of a value that ``id(of:hash:)`` did not find.
    func remember(_ utf8: UnsafeBufferPointer<UInt8>, hash: UInt64, id: UInt32) {
        guard count < InternedValueCache.capacityLimit, !utf8.isEmpty else { return }
        if (count + 1) * 2 > slots.count { grow() }
        let offset = arena.count
        arena.append(contentsOf: utf8)
        place(Slot(hash: hash, offset: Int32(offset), length: Int32(utf8.count), id: id))
        count += 1
    }

    private func place(_ slot: Slot) {
        let mask = slots.count - 1
        var index = Int(truncatingIfNeeded: slot.hash) & mask
        while slots[index].length != 0 { index = (index + 1) & mask }
        slots[index] = slot
    }

    private func grow() {
        let old = slots
        slots = [Slot](repeating: Slot(), count: old.count * 2)
        for slot in old where slot.length != 0 { place(slot) }
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
