/// Remembers the field-table ids of the interned values written with one field table, so that
/// writing a value again costs a cheap hash of its bytes and one comparison, instead of building
/// its table entry (prefix + value) and hashing that with `String`'s hasher.
///
/// It lives with the key caches of ``EncoderMemo``, which are reused only with the very table
/// (same storage) they were made against, so the ids stay right. A value the table refused (its
/// ``FieldTable/internedValueLimit`` was reached) is remembered as refused: a table only grows, so
/// the limit stays reached.
@usableFromInline final class InternedValueCache {
    /// The answer for a value that is written out rather than interned.
    static let refused = UInt32.max
    /// At most this many values are remembered; others are looked up in the table each time.
    static let capacityLimit = 4 * FieldTable.internedValueLimit

    private struct Slot {
        var hash: UInt64
        var offset: Int32
        /// 0 for an empty slot (interned values are never empty).
        var length: Int32
        var id: UInt32
    }

    // Raw buffers, so that a lookup touches no reference count; made on first use.
    private var slots: UnsafeMutablePointer<Slot>?
    private var slotCount = 0
    /// The bytes of the remembered values, one after another.
    private var arena: UnsafeMutablePointer<UInt8>?
    private var arenaCount = 0
    private var arenaCapacity = 0
    private var count = 0

    deinit {
        slots?.deallocate()
        arena?.deallocate()
    }

    /// The id of `utf8` as an interned value of `state`'s field table, interning it when new;
    /// ``refused`` when it is written out instead (outside the length bounds, or the table's value
    /// limit is reached).
    @inline(__always) func id(of utf8: UnsafeBufferPointer<UInt8>, in state: EncoderState) -> UInt32 {
        let length = utf8.count
        guard length >= FieldTable.internedValueMinimumLength, length <= FieldTable.internedValueMaximumLength
        else { return InternedValueCache.refused }
        let hash = InternedValueCache.hash(utf8)
        if let slots {
            let mask = slotCount - 1
            var index = Int(truncatingIfNeeded: hash) & mask
            while true {
                let slot = slots[index]
                if slot.length == 0 { break }
                if slot.hash == hash && Int(slot.length) == length
                    && memcmp(arena! + Int(slot.offset), utf8.baseAddress!, length) == 0
                {
                    return slot.id
                }
                index = (index + 1) & mask
            }
        }
        return intern(utf8, hash: hash, in: state)
    }

    @inline(never) private func intern(_ utf8: UnsafeBufferPointer<UInt8>, hash: UInt64, in state: EncoderState) -> UInt32 {
        let id = state.fields.internValue(String(decoding: utf8, as: UTF8.self)) ?? InternedValueCache.refused
        remember(utf8, hash: hash, id: id)
        return id
    }

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

    private func remember(_ utf8: UnsafeBufferPointer<UInt8>, hash: UInt64, id: UInt32) {
        guard count < InternedValueCache.capacityLimit else { return }
        if (count + 1) * 2 > slotCount { growSlots() }
        if arenaCount + utf8.count > arenaCapacity { growArena(atLeast: arenaCount + utf8.count) }
        (arena! + arenaCount).initialize(from: utf8.baseAddress!, count: utf8.count)
        place(Slot(hash: hash, offset: Int32(arenaCount), length: Int32(utf8.count), id: id))
        arenaCount += utf8.count
        count += 1
    }

    private func place(_ slot: Slot) {
        let slots = slots!
        let mask = slotCount - 1
        var index = Int(truncatingIfNeeded: slot.hash) & mask
        while slots[index].length != 0 { index = (index + 1) & mask }
        slots[index] = slot
    }

    private func growSlots() {
        let old = slots
        let oldCount = slotCount
        slotCount = max(64, oldCount * 2)
        slots = .allocate(capacity: slotCount)
        slots!.initialize(repeating: Slot(hash: 0, offset: 0, length: 0, id: 0), count: slotCount)
        if let old {
            for index in 0..<oldCount where old[index].length != 0 { place(old[index]) }
            old.deallocate()
        }
    }

    private func growArena(atLeast needed: Int) {
        let capacity = max(1024, arenaCapacity * 2, needed)
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        if let arena {
            grown.initialize(from: arena, count: arenaCount)
            arena.deallocate()
        }
        arena = grown
        arenaCapacity = capacity
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
