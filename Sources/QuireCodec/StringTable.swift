/// Reads string values in all their forms, resolving references to earlier strings of the same root
/// value (docs/FORMAT.md, "String references") and interned strings to their field-table entries.
///
/// References name strings by number, so the numbered strings are found by one walk over the whole
/// root value, made only when the first reference is read: lazy and typed readers jump around and
/// skip values, so they cannot count strings as they go.
final class StringTable {
    // Variables so that a thread's cached decoder state can reuse its table (``reset``).
    @exclusivity(unchecked) private(set) var reader: ByteReader
    @exclusivity(unchecked) private(set) var rootStart: Int
    @exclusivity(unchecked) private(set) var rootEnd: Int
    @exclusivity(unchecked) private(set) var depthLimit: Int
    /// The interned value of each field-table id (nil for field names). A table a thread reuses
    /// holds its own copies, so that the strings decoded records share are counted by that
    /// thread alone, not bounced between cores.
    @exclusivity(unchecked) private(set) var values: [String?]
    /// The table's values as given, to notice when they change.
    @exclusivity(unchecked) private var givenValues: [String?]
    /// Byte offset and length of each numbered string found so far, in payload order.
    @exclusivity(unchecked) private var offsets: [Int] = []
    @exclusivity(unchecked) private var lengths: [Int] = []
    /// Where the walk that numbers strings stopped: it goes only as far as the references need.
    @exclusivity(unchecked) private var walk = Walk()

    private struct Walk {
        var started = false
        var finished = false
        var position = 0
        var end = 0
        var inObject = false
        var parentEnds: [Int] = []
        var parentIsObject: [Bool] = []
    }

    /// `ownCopies` for a table a thread keeps and reuses (copying the values costs more than a
    /// single decode gains).
    init(reader: ByteReader, rootStart: Int, rootEnd: Int, depthLimit: Int, values: [String?], ownCopies: Bool = false) {
        self.reader = reader
        self.values = ownCopies ? StringTable.ownCopies(values) : values
        self.givenValues = values
        self.rootStart = rootStart
        self.rootEnd = rootEnd
        self.depthLimit = depthLimit
    }

    /// Makes the table serve another root value, keeping its storage.
    func reset(reader: ByteReader, rootStart: Int, rootEnd: Int, depthLimit: Int, values: [String?]) {
        self.reader = reader
        self.rootStart = rootStart
        self.rootEnd = rootEnd
        self.depthLimit = depthLimit
        if !sameStorage(givenValues, values) {
            self.values = StringTable.ownCopies(values)
            givenValues = values
        }
        // Storage that one huge record grew is dropped rather than kept for the thread's lifetime.
        let keep = offsets.capacity <= StringTable.retainedCapacity
        offsets.removeAll(keepingCapacity: keep)
        lengths.removeAll(keepingCapacity: keep)
        walk.started = false
        walk.finished = false
        walk.inObject = false
        walk.parentEnds.removeAll(keepingCapacity: true)
        walk.parentIsObject.removeAll(keepingCapacity: true)
    }

    /// `values` with every string in storage of its own (a copy of a `String` shares it).
    private static func ownCopies(_ values: [String?]) -> [String?] {
        values.map { value in value.map { String(decoding: Array($0.utf8), as: UTF8.self) } }
    }

    /// Numbered strings kept room for between reuses.
    static let retainedCapacity = 4096

    /// True for the kinds that hold a string (``read(_:at:end:)`` accepts them, and `url`).
    @inline(__always) static func isString(_ kind: ValueKind) -> Bool {
        kind == .shortString || kind == .string || kind == .stringRef || kind == .stringPrefixRef
            || kind == .internedString
    }

    /// The text of the string (or url) value whose tag, of kind `kind`, is at `s`; the value ends by `e`.
    @inline(__always) func read(_ kind: ValueKind, at s: Int, end e: Int) throws(CompactDecodingError) -> String {
        var position = s + 1
        switch kind {
        case .shortString:
            let length = Int(reader.base.load(fromByteOffset: s, as: UInt8.self) & 0x7F)
            guard length <= e - position else { throw CompactDecodingError(.truncated, offset: position) }
            return try reader.string(at: position, length: length)
        case .string, .url:
            let length = try reader.length(&position, end: e)
            return try reader.string(at: position, length: length)
        case .internedString:
            return try interned(at: s, end: e)
        default:
            return try readReference(kind, at: s, end: e)
        }
    }

    /// The value of the interned string whose tag is at `s`. An id past the table is
    /// `unknownFieldID` (the table is older than the record: reload and retry, as for field ids);
    /// an id naming a field rather than a value is malformed.
    private func interned(at s: Int, end e: Int) throws(CompactDecodingError) -> String {
        var position = s + 1
        let id = try reader.varint(&position, end: e)
        guard id < UInt64(values.count) else {
            throw CompactDecodingError(.unknownFieldID(UInt32(truncatingIfNeeded: id)), offset: s + 1)
        }
        guard let value = values[Int(id)] else {
            throw CompactDecodingError(.badKind(ValueKind.internedString.rawValue), offset: s)
        }
        return value
    }

    private func readReference(_ kind: ValueKind, at s: Int, end e: Int) throws(CompactDecodingError) -> String {
        var position = s + 1
        let index = try reader.varint(&position, end: e)
        if kind == .stringRef {
            let (offset, length) = try target(index, before: s)
            return try reader.string(at: offset, length: length)
        }
        guard kind == .stringPrefixRef else {
            throw CompactDecodingError(.typeMismatch(expected: "string", found: kind.name), offset: s)
        }
        let sharedAt = position
        let shared = try reader.varint(&position, end: e)
        let suffix = try reader.length(&position, end: e)
        let (offset, length) = try target(index, before: s)
        guard shared <= UInt64(length) else { throw CompactDecodingError(.badKind(ValueKind.stringPrefixRef.rawValue), offset: sharedAt) }
        return try reader.joinedString(offset, Int(shared), position, suffix)
    }

    /// The bytes of numbered string `index`, which must start before `position` (so references
    /// only point backwards and never to themselves).
    private func target(_ index: UInt64, before position: Int) throws(CompactDecodingError) -> (Int, Int) {
        if index >= UInt64(offsets.count) { try number(upTo: index) }
        guard index < UInt64(offsets.count), offsets[Int(index)] < position else {
            throw CompactDecodingError(.badKind(reader.base.load(fromByteOffset: position, as: UInt8.self)), offset: position)
        }
        return (offsets[Int(index)], lengths[Int(index)])
    }

    /// Numbers the strings of the root value (`string` values of at least ``minimumNumberedStringLength``
    /// bytes, in payload order, outside maps) until string `index` is found or the value ends.
    private func number(upTo index: UInt64) throws(CompactDecodingError) {
        if !walk.started {
            walk.started = true
            walk.position = rootStart
            walk.end = rootEnd
        }
        var position = walk.position
        var end = walk.end
        var inObject = walk.inObject
        defer {
            walk.position = position
            walk.end = end
            walk.inObject = inObject
        }
        while !walk.finished && UInt64(offsets.count) <= index {
            if position >= end {
                guard let parentEnd = walk.parentEnds.popLast() else {
                    walk.finished = true
                    return
                }
                end = parentEnd
                inObject = walk.parentIsObject.removeLast()
                continue
            }
            if inObject { _ = try reader.varint(&position, end: end) }
            let tag = try reader.byte(at: position, end: end)
            guard let kind = ValueKind.of(tag) else { throw CompactDecodingError(.badKind(tag), offset: position) }
            var cursor = position + 1
            switch kind {
            case .shortString, .string:
                let length = kind == .shortString ? Int(tag & 0x7F) : try reader.length(&cursor, end: end)
                guard length <= end - cursor else { throw CompactDecodingError(.truncated, offset: cursor) }
                if length >= minimumNumberedStringLength {
                    offsets.append(cursor)
                    lengths.append(length)
                }
                position = cursor + length
            case .array, .object:
                guard walk.parentEnds.count < depthLimit else {
                    throw CompactDecodingError(.depthLimitExceeded, offset: position)
                }
                let length = try reader.length(&cursor, end: end)
                walk.parentEnds.append(end)
                walk.parentIsObject.append(inObject)
                end = cursor + length
                inObject = kind == .object
                position = cursor
            default:
                position = try reader.skip(position, end: end)
            }
        }
    }
}
