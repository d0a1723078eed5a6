import Foundation

/// Appends compact values to one growing byte array; the only place bytes are written.
@usableFromInline struct ByteWriter {
    @usableFromInline var bytes: [UInt8]
    /// Numbered strings written so far (see docs/FORMAT.md, "String references"), in write order.
    var numbered: [NumberedString] = []
    /// How many maps are open: strings inside maps are neither numbered nor references, because
    /// sorting a map's entries would change their order.
    var mapDepth = 0
    /// Built once a record has ``NumberedStringIndex/threshold`` numbered strings: from then on
    /// references are found by hash, not by scanning every earlier string.
    var index: NumberedStringIndex?

    init(capacity: Int = 512) {
        bytes = []
        bytes.reserveCapacity(capacity)
        // About one numbered string per 24 bytes of a record: sized once instead of regrown.
        numbered.reserveCapacity(max(8, capacity / 24))
    }

    /// Empties the writer for another record, keeping its capacity.
    mutating func restart() {
        bytes.removeAll(keepingCapacity: true)
        numbered.removeAll(keepingCapacity: true)
        mapDepth = 0
        index = nil
    }

    @inlinable @inline(__always) mutating func byte(_ value: UInt8) { bytes.append(value) }

    @inlinable @inline(__always) mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    @inlinable @inline(__always) mutating func kind(_ kind: ValueKind) { bytes.append(kind.rawValue) }

    mutating func null() { kind(.null) }
    @usableFromInline mutating func bool(_ value: Bool) { kind(value ? .trueValue : .falseValue) }

    @inlinable @inline(__always) mutating func int(_ value: Int64) {
        let folded = zigzag(value)
        if folded < 0x40 { return byte(ValueKind.smallInt.rawValue | UInt8(folded)) }
        kind(.int)
        varint(folded)
    }

    /// An int in the long form (map keys use only the long forms).
    mutating func longInt(_ value: Int64) {
        kind(.int)
        varint(zigzag(value))
    }

    @inlinable @inline(__always) mutating func uint(_ value: UInt64) {
        kind(.uint)
        varint(value)
    }

    @usableFromInline mutating func double(_ value: Double) {
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

    /// A string value: a reference to an equal earlier string, a shared prefix plus suffix, or the bytes.
    @usableFromInline mutating func string(_ value: String) {
        // Native strings lend their UTF-8 without a copy (and without retaining them).
        if value.utf8.withContiguousStorageIfAvailable({ text($0) }) != nil { return }
        var value = value
        value.withUTF8 { text($0) }
    }

    /// A string in the long form (tag, varint length, bytes), never numbered: map keys and URLs.
    @usableFromInline mutating func string(_ value: String, kind: ValueKind) {
        self.kind(kind)
        rawString(value)
    }

    mutating func text(_ utf8: UnsafeBufferPointer<UInt8>) {
        let count = utf8.count
        guard count >= minimumNumberedStringLength, mapDepth == 0 else { return plainText(utf8) }
        let source = utf8.baseAddress!
        let head = NumberedString.head(source, count: count)
        var best = -1
        var bestLength = 0
        var equal = -1
        var hash = 0
        if index != nil {
            hash = NumberedStringIndex.hash(source, count: count)
            (equal, best, bestLength) = indexedMatch(source, count: count, head: head, hash: hash)
        } else {
            (equal, best, bestLength) = scannedMatch(source, count: count, head: head)
        }
        if equal >= 0 {
            kind(.stringRef)
            varint(UInt64(equal))
            return
        }
        if best >= 0 {
            kind(.stringPrefixRef)
            varint(UInt64(best))
            varint(UInt64(bestLength))
            varint(UInt64(count - bestLength))
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[bestLength...]))
            return
        }
        plainText(utf8)
        numbered.append(NumberedString(offset: bytes.count - count, length: count, head: head))
        if index != nil {
            index!.insert(index: numbered.count - 1, hash: hash, head: head, length: count)
        } else if numbered.count == NumberedStringIndex.threshold {
            buildIndex()
        }
    }

    /// Indexes the numbered strings written so far (when their number reaches the threshold).
    private mutating func buildIndex() {
        var built = NumberedStringIndex()
        bytes.withUnsafeBufferPointer { buffer in
            for (i, string) in numbered.enumerated() {
                let hash = NumberedStringIndex.hash(buffer.baseAddress! + string.offset, count: string.length)
                built.insert(index: i, hash: hash, head: string.head, length: string.length)
            }
        }
        index = built
    }

    /// The equal string, else the best shared prefix, found through the index.
    private func indexedMatch(_ source: UnsafePointer<UInt8>, count: Int, head: UInt64, hash: Int)
        -> (equal: Int, best: Int, bestLength: Int)
    {
        guard let index else { return (-1, -1, 0) }
        var equal = -1
        var best = -1
        var bestLength = 0
        bytes.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress!
            index.sameHash(hash) { i in
                let candidate = numbered[i]
                guard candidate.length == count && memcmp(base + candidate.offset, source, count) == 0 else { return false }
                equal = i
                return true
            }
            guard equal < 0, count >= minimumSharedPrefixLength else { return }
            // Most recent first: `>=` lets an earlier string win a tie, as in the scan.
            index.sameHead(head) { i in
                let candidate = numbered[i]
                let other = base + candidate.offset
                let limit = min(candidate.length, count)
                var shared = minimumSharedPrefixLength
                while shared < limit && other[shared] == source[shared] { shared += 1 }
                if shared >= bestLength {
                    best = i
                    bestLength = shared
                }
            }
        }
        return (equal, best, bestLength)
    }

    /// The equal string, else the best shared prefix, found by scanning every numbered string.
    private func scannedMatch(_ source: UnsafePointer<UInt8>, count: Int, head: UInt64)
        -> (equal: Int, best: Int, bestLength: Int)
    {
        let canSharePrefix = count >= minimumSharedPrefixLength
        var best = -1
        var bestLength = 0
        var equal = -1
        // Most strings match nothing: one comparison of the first 8 bytes rules a candidate out.
        numbered.withUnsafeBufferPointer { candidates in
            bytes.withUnsafeBufferPointer { buffer in
                let base = buffer.baseAddress!
                for index in candidates.indices {
                    let candidate = candidates[index]
                    guard candidate.head == head else { continue }
                    let other = base + candidate.offset
                    if candidate.length == count && memcmp(other, source, count) == 0 {
                        equal = index
                        return
                    }
                    guard canSharePrefix && candidate.length >= minimumSharedPrefixLength else { continue }
                    let limit = min(candidate.length, count)
                    var shared = minimumSharedPrefixLength
                    while shared < limit && other[shared] == source[shared] { shared += 1 }
                    if shared > bestLength {
                        best = index
                        bestLength = shared
                    }
                }
            }
        }
        return (equal, best, bestLength)
    }

    /// The bytes of a string: short strings carry their length in the tag.
    @inline(__always) mutating func plainText(_ utf8: UnsafeBufferPointer<UInt8>) {
        if utf8.count < 0x80 {
            byte(ValueKind.shortString.rawValue | UInt8(utf8.count))
        } else {
            kind(.string)
            varint(UInt64(utf8.count))
        }
        bytes.append(contentsOf: utf8)
    }

    /// Length-prefixed UTF-8 without a kind tag (used for names and values alike).
    @inline(__always) mutating func rawString(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: UnsafeRawBufferPointer(utf8))
        }
    }

    @usableFromInline mutating func data<C: Collection<UInt8>>(_ value: C) {
        kind(.bytes)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    @usableFromInline mutating func date(_ value: Date) {
        // Whole seconds (the common case for API dates) take 5 bytes, whole milliseconds 6; anything
        // finer keeps full precision.
        let seconds = value.timeIntervalSince1970
        let whole = seconds.rounded()
        if whole.magnitude < 9.0e15, Date(timeIntervalSince1970: whole) == value {
            kind(.dateWholeSeconds)
            varint(zigzag(Int64(whole)))
            return
        }
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
    @inlinable @inline(__always) mutating func openContainer(_ kind: ValueKind) -> Int {
        let start = bytes.count
        bytes.append(kind.rawValue)
        bytes.append(0)
        return start
    }

    /// Writes the body length of the container whose tag is at `start`, widening the slot when needed.
    @usableFromInline mutating func closeContainer(at start: Int) {
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
        // Numbered strings in this body move with it.
        var moved = numbered.count - 1
        while moved >= 0 && numbered[moved].offset >= bodyStart {
            numbered[moved].offset += extra
            moved -= 1
        }
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

/// Where a numbered string's bytes are in the buffer, with its first 8 bytes for a quick prefix test.
struct NumberedString {
    var offset: Int
    let length: Int
    /// The first 8 bytes, zero-padded when shorter.
    let head: UInt64

    @inline(__always) static func head(_ bytes: UnsafePointer<UInt8>, count: Int) -> UInt64 {
        if count >= 8 { return UnsafeRawPointer(bytes).loadUnaligned(as: UInt64.self) }
        var head: UInt64 = 0
        withUnsafeMutableBytes(of: &head) { $0.baseAddress!.copyMemory(from: bytes, byteCount: count) }
        return head
    }
}
