/// A growable byte buffer for writers that append many small pieces: room is reserved once for a
/// piece's largest form and the bytes are then stored without a check or a copy-on-write test
/// each (what `[UInt8].append` pays per call, a tenth of a dump's time).
struct ByteSink: ~Copyable {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// The bytes written so far; valid until the next write.
    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    /// Makes room for `extra` more bytes, so that that many ``appendReserved(_:)`` need no check.
    @inline(__always) mutating func reserve(_ extra: Int) {
        if extra > capacity - count { grow(to: count + extra) }
    }

    private mutating func grow(to needed: Int) {
        var newCapacity = capacity
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    /// Appends a byte there is room for (after ``reserve(_:)``).
    @inline(__always) mutating func appendReserved(_ byte: UInt8) {
        assert(count < capacity, "no room reserved")
        base[count] = byte
        count += 1
    }

    /// Appends bytes there is room for (after ``reserve(_:)``).
    @inline(__always) mutating func appendReserved(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        assert(bytes.count <= capacity - count, "no room reserved")
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    @inline(__always) mutating func append(_ byte: UInt8) {
        reserve(1)
        appendReserved(byte)
    }

    @inline(__always) mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        reserve(bytes.count)
        appendReserved(bytes)
    }

    /// Drops the bytes after the first `newCount` (a piece that failed halfway).
    mutating func truncate(to newCount: Int) {
        precondition(newCount >= 0 && newCount <= count)
        count = newCount
    }

    /// Empties the buffer, keeping its memory unless one huge piece grew it past `retained` bytes.
    mutating func removeAll(shrinkingAbove retained: Int) {
        count = 0
        guard capacity > retained else { return }
        base.deallocate()
        capacity = max(retained, 64)
        base = .allocate(capacity: capacity)
    }
}
