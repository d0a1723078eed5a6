/// Reads an object (field ids resolved through the field table) or a map (inline keys).
struct KeyedContainerDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let state: DecoderState
    let bodyStart: Int
    let bodyEnd: Int
    let isMap: Bool
    let slot: Int
    let pathDepth: Int
    /// For objects: this object's entries in `state.entries`, recorded while validating.
    var entriesStart = 0
    var entriesEnd = 0

    init(state: DecoderState, slot: Int) throws {
        let body = try state.containerBody(.object, .map)
        self.state = state
        self.bodyStart = body.start
        self.bodyEnd = body.end
        self.isMap = body.kind == .map
        self.slot = slot
        self.pathDepth = state.steps.count
        try state.run(Any.self, nil) { () throws(CompactDecodingError) in try validate() }
    }

    private init(state: DecoderState, start: Int, end: Int, isMap: Bool, slot: Int) {
        self.state = state
        self.bodyStart = start
        self.bodyEnd = end
        self.isMap = isMap
        self.slot = slot
        self.pathDepth = state.steps.count
        if !isMap { try? validate() }
    }

    var codingPath: [any CodingKey] { state.steps.prefix(pathDepth).map(\.codingKey) }

    /// One pass over the entries: every field id must be in the table (so a stale table is never
    /// silently wrong), every key must be a string or integer, and every value must fit the body.
    private mutating func validate() throws(CompactDecodingError) {
        let reader = state.reader
        var position = bodyStart
        entriesStart = state.entries.count
        defer { entriesEnd = state.entries.count }
        while position < bodyEnd {
            if isMap {
                let tag = try reader.byte(at: position, end: bodyEnd)
                guard tag == ValueKind.string.rawValue || tag == ValueKind.int.rawValue || tag == ValueKind.uint.rawValue
                else { throw CompactDecodingError(.badKind(tag), offset: position) }
                position = try reader.skip(position, end: bodyEnd)
            } else {
                let at = position
                let id = try reader.varint(&position, end: bodyEnd)
                guard id < UInt64(state.names.count) else {
                    throw CompactDecodingError(.unknownFieldID(UInt32(truncatingIfNeeded: id)), offset: at)
                }
                let valueStart = position
                position = try reader.skip(position, end: bodyEnd)
                state.entries.append(FieldEntry(id: Int(id), start: valueStart, end: position))
                continue
            }
            position = try reader.skip(position, end: bodyEnd)
        }
    }

    /// The value range for `key` in an object, from the entries recorded by `validate`. Starts at the
    /// entry after the last one found (fields are usually read in written order) and wraps around once.
    @inline(__always) func findField(_ key: Key) -> (Int, Int)? {
        let count = entriesEnd - entriesStart
        guard count > 0 else { return nil }
        let name = key.stringValue
        let names = state.names
        var index = state.hintBody[slot] == bodyStart ? state.hintNext[slot] : entriesStart
        if index >= entriesEnd || index < entriesStart { index = entriesStart }
        // Field names up to 15 UTF-8 bytes are stored inline in the String, and synthesized keys
        // return the same literal each time: comparing the two words settles most lookups.
        let bits = unsafeBitCast(name, to: (UInt64, UInt64).self)
        for _ in 0..<count {
            let entry = state.entries[index]
            if unsafeBitCast(names[entry.id], to: (UInt64, UInt64).self) == bits {
                return hit(entry, index)
            }
            index += 1
            if index == entriesEnd { index = entriesStart }
        }
        // Not bit-identical: a name loaded from elsewhere, or (most often) a key this record lacks.
        // Lengths rule out nearly all entries before a full comparison.
        let length = name.utf8.count
        for index in entriesStart..<entriesEnd {
            let candidate = names[state.entries[index].id]
            if candidate.utf8.count == length && candidate == name { return hit(state.entries[index], index) }
        }
        return nil
    }

    @inline(__always) private func hit(_ entry: FieldEntry, _ index: Int) -> (Int, Int) {
        state.hintBody[slot] = bodyStart
        state.hintNext[slot] = index + 1
        return (entry.start, entry.end)
    }

    /// The value range for `key`, or nil when absent. Starts at the hint and wraps around once.
    @inline(__always) func find(_ key: Key) throws(CompactDecodingError) -> (Int, Int)? {
        if !isMap { return findField(key) }
        let reader = state.reader
        let hint = state.hintBody[slot] == bodyStart ? state.hintNext[slot] : bodyStart
        var position = hint
        var segmentEnd = bodyEnd
        var wrapped = false
        let name = key.stringValue
        while true {
            while position < segmentEnd {
                let matches: Bool
                if isMap {
                    matches = try mapKeyMatches(&position, key: key, name: name)
                } else {
                    // Clamped: a damaged id past Int.max is just unknown, not a trap.
                    let id = Int(clamping: try reader.varint(&position, end: bodyEnd))
                    matches = id < state.names.count && state.names[id] == name
                }
                let valueStart = position
                position = try reader.skip(position, end: bodyEnd)
                if matches {
                    state.hintBody[slot] = bodyStart
                    state.hintNext[slot] = position
                    return (valueStart, position)
                }
            }
            if wrapped || hint == bodyStart { return nil }
            wrapped = true
            segmentEnd = hint
            position = bodyStart
        }
    }

    private func mapKeyMatches(_ position: inout Int, key: Key, name: String) throws(CompactDecodingError) -> Bool {
        let reader = state.reader
        let tag = try reader.byte(at: position, end: bodyEnd)
        var cursor = position + 1
        defer { position = cursor }
        switch tag {
        case ValueKind.string.rawValue:
            let length = try reader.length(&cursor, end: bodyEnd)
            let start = cursor
            cursor += length
            return reader.bytesEqual(at: start, length: length, name)
        case ValueKind.int.rawValue:
            // Integer keys are canonical decimal, so comparing text is exact.
            return String(unzigzag(try reader.varint(&cursor, end: bodyEnd))) == name
        case ValueKind.uint.rawValue:
            return String(try reader.varint(&cursor, end: bodyEnd)) == name
        default:
            throw CompactDecodingError(.badKind(tag), offset: position)
        }
    }

    @inline(__always) func require(_ key: Key, _ type: Any.Type) throws -> (Int, Int) {
        guard let range = try state.run(type, key, { () throws(CompactDecodingError) in try find(key) }) else {
            let codingPath = state.steps.prefix(pathDepth).map(\.codingKey) + [key]
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "No value for \(pathString(codingPath))."))
        }
        return range
    }

    /// The range for `key` unless it is absent or null.
    @inline(__always) func present(_ key: Key) throws -> (Int, Int)? {
        try state.run(Any.self, key) { () throws(CompactDecodingError) in
            guard let (s, e) = try find(key), try !state.isNull(s, e) else { return nil }
            return (s, e)
        }
    }

    var allKeys: [Key] {
        var keys: [Key] = []
        let reader = state.reader
        var position = bodyStart
        while position < bodyEnd {
            do {
                if isMap {
                    let tag = try reader.byte(at: position, end: bodyEnd)
                    var cursor = position + 1
                    switch tag {
                    case ValueKind.string.rawValue:
                        let length = try reader.length(&cursor, end: bodyEnd)
                        if let key = Key(stringValue: try reader.string(at: cursor, length: length)) { keys.append(key) }
                    case ValueKind.int.rawValue:
                        let value = Int(truncatingIfNeeded: unzigzag(try reader.varint(&cursor, end: bodyEnd)))
                        if let key = Key(intValue: value) ?? Key(stringValue: String(value)) { keys.append(key) }
                    default:
                        let value = try reader.varint(&cursor, end: bodyEnd)
                        if let key = Key(stringValue: String(value)) { keys.append(key) }
                    }
                    position = try reader.skip(position, end: bodyEnd)
                } else {
                    let id = Int(clamping: try reader.varint(&position, end: bodyEnd))
                    if id < state.names.count, let key = Key(stringValue: state.names[id]) { keys.append(key) }
                }
                position = try reader.skip(position, end: bodyEnd)
            } catch {
                break
            }
        }
        return keys
    }

    func contains(_ key: Key) -> Bool {
        ((try? find(key)) ?? nil) != nil
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        let (s, e) = try require(key, Any.self)
        return try state.run(Any.self, key) { () throws(CompactDecodingError) in try state.isNull(s, e) }
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        let (s, e) = try require(key, Bool.self)
        return try state.run(Bool.self, key) { () throws(CompactDecodingError) in try state.readBool(s, e) }
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let (s, e) = try present(key) else { return nil }
        return try state.run(Bool.self, key) { () throws(CompactDecodingError) in try state.readBool(s, e) }
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        let (s, e) = try require(key, String.self)
        return try state.run(String.self, key) { () throws(CompactDecodingError) in try state.readString(s, e) }
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let (s, e) = try present(key) else { return nil }
        return try state.run(String.self, key) { () throws(CompactDecodingError) in try state.readString(s, e) }
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        let (s, e) = try require(key, Double.self)
        return try state.run(Double.self, key) { () throws(CompactDecodingError) in try state.readDouble(s, e) }
    }

    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        guard let (s, e) = try present(key) else { return nil }
        return try state.run(Double.self, key) { () throws(CompactDecodingError) in try state.readDouble(s, e) }
    }

    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        let (s, e) = try require(key, Float.self)
        return try state.run(Float.self, key) { () throws(CompactDecodingError) in try state.readFloat(s, e) }
    }

    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        guard let (s, e) = try present(key) else { return nil }
        return try state.run(Float.self, key) { () throws(CompactDecodingError) in try state.readFloat(s, e) }
    }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        let (s, e) = try require(key, Int.self)
        guard let value = try state.run(Int.self, key, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int(exactly: $0) })
        else { throw state.outOfRange(Int.self, key) }
        return value
    }

    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        guard let (s, e) = try present(key) else { return nil }
        guard let value = try state.run(Int.self, key, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int(exactly: $0) })
        else { throw state.outOfRange(Int.self, key) }
        return value
    }

    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        let (s, e) = try require(key, Int8.self)
        guard let value = try state.run(Int8.self, key, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int8(exactly: $0) })
        else { throw state.outOfRange(Int8.self, key) }
        return value
    }

    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
        guard let (s, e) = try present(key) else { return nil }
        guard let value = try state.run(Int8.self, key, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int8(exactly: $0) })
        else { throw state.outOfRange(Int8.self, key) }
        return value
    }

    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        let (s, e) = try require(key, Int16.self)
        guard let value = try state.run(Int16.self, key, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int16(exactly: $0) })
        else { throw state.outOfRange(Int16.self, key) }
        return value
    }

    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
        guard let (s, e) = try present(key) else { return nil }
        guard let value = try state.run(Int16.self, key, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int16(exactly: $0) })
        else { throw state.outOfRange(Int16.self, key) }
        return value
    }

    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        let (s, e) = try require(key, Int32.self)
        guard let value = try state.run(Int32.self, key, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int32(exactly: $0) })
        else { throw state.outOfRange(Int32.self, key) }
        return value
    }

    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
        guard let (s, e) = try present(key) else { return nil }
        guard let value = try state.run(Int32.self, key, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int32(exactly: $0) })
        else { throw state.outOfRange(Int32.self, key) }
        return value
    }

    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        let (s, e) = try require(key, Int64.self)
        guard let value = try state.run(Int64.self, key, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int64(exactly: $0) })
        else { throw state.outOfRange(Int64.self, key) }
        return value
    }

    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        guard let (s, e) = try present(key) else { return nil }
        guard let value = try state.run(Int64.self, key, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int64(exactly: $0) })
        else { throw state.outOfRange(Int64.self, key) }
        return value
    }

    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        let (s, e) = try require(key, UInt.self)
        guard let value = try state.run(UInt.self, key, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt(exactly: $0) })
        else { throw state.outOfRange(UInt.self, key) }
        return value
    }

    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
        guard let (s, e) = try present(key) else { return nil }
        guard let value = try state.run(UInt.self, key, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt(exactly: $0) })
        else { throw state.outOfRange(UInt.self, key) }
        return value
    }

    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        let (s, e) = try require(key, UInt8.self)
        guard let value = try state.run(UInt8.self, key, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt8(exactly: $0) })
        else { throw state.outOfRange(UInt8.self, key) }
        return value
    }

    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
        guard let (s, e) = try present(key) else { return nil }
        guard let value = try state.run(UInt8.self, key, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt8(exactly: $0) })
        else { throw state.outOfRange(UInt8.self, key) }
        return value
    }

    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        let (s, e) = try require(key, UInt16.self)
        guard let value = try state.run(UInt16.self, key, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt16(exactly: $0) })
        else { throw state.outOfRange(UInt16.self, key) }
        return value
    }

    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
        guard let (s, e) = try present(key) else { return nil }
        guard let value = try state.run(UInt16.self, key, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt16(exactly: $0) })
        else { throw state.outOfRange(UInt16.self, key) }
        return value
    }

    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        let (s, e) = try require(key, UInt32.self)
        guard let value = try state.run(UInt32.self, key, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt32(exactly: $0) })
        else { throw state.outOfRange(UInt32.self, key) }
        return value
    }

    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
        guard let (s, e) = try present(key) else { return nil }
        guard let value = try state.run(UInt32.self, key, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt32(exactly: $0) })
        else { throw state.outOfRange(UInt32.self, key) }
        return value
    }

    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        let (s, e) = try require(key, UInt64.self)
        guard let value = try state.run(UInt64.self, key, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt64(exactly: $0) })
        else { throw state.outOfRange(UInt64.self, key) }
        return value
    }

    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
        guard let (s, e) = try present(key) else { return nil }
        guard let value = try state.run(UInt64.self, key, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt64(exactly: $0) })
        else { throw state.outOfRange(UInt64.self, key) }
        return value
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let (s, e) = try require(key, T.self)
        return try state.decodeValue(T.self, s, e, key: key)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let (s, e) = try present(key) else { return nil }
        return try state.decodeValue(T.self, s, e, key: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        let (s, e) = try require(key, Any.self)
        return try state.nested(s, e, key) {
            try KeyedDecodingContainer(KeyedContainerDecoder<NestedKey>(state: state, slot: min(slot + 1, state.hintBody.count - 1)))
        }
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let (s, e) = try require(key, Any.self)
        return try state.nested(s, e, key) { try UnkeyedContainerDecoder(state: state) }
    }

    func superDecoder() throws -> any Decoder {
        let key = NamedKey("super")
        guard let (s, e) = try state.run(Any.self, key, { () throws(CompactDecodingError) in
            try KeyedContainerDecoder<NamedKey>(state: state, start: bodyStart, end: bodyEnd, isMap: isMap, slot: slot).find(key)
        }) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath + [key], debugDescription: "No super value."))
        }
        return state.detached(s, e, key)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        let (s, e) = try require(key, Any.self)
        return state.detached(s, e, key)
    }
}

/// Reads an array in order.
struct UnkeyedContainerDecoder: UnkeyedDecodingContainer {
    let state: DecoderState
    let bodyStart: Int
    let bodyEnd: Int
    let pathDepth: Int
    var position: Int
    private(set) var currentIndex = 0

    init(state: DecoderState) throws {
        let body = try state.containerBody(.array)
        self.state = state
        self.bodyStart = body.start
        self.bodyEnd = body.end
        self.position = body.start
        self.pathDepth = state.steps.count
    }

    var codingPath: [any CodingKey] { state.steps.prefix(pathDepth).map(\.codingKey) }
    var isAtEnd: Bool { position >= bodyEnd }

    var count: Int? {
        var position = bodyStart
        var count = 0
        while position < bodyEnd {
            guard let next = try? state.reader.skip(position, end: bodyEnd) else { return nil }
            position = next
            count += 1
        }
        return count
    }

    @inline(__always) mutating func next(_ type: Any.Type) throws -> (Int, Int) {
        guard position < bodyEnd else {
            let codingPath = codingPath + [IndexKey(currentIndex)]
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath, debugDescription: "Unkeyed container is at end."))
        }
        let s = position
        let key = IndexKey(currentIndex)
        let e = try state.run(type, key) { () throws(CompactDecodingError) in try state.reader.skip(s, end: bodyEnd) }
        position = e
        currentIndex += 1
        return (s, e)
    }

    mutating func decodeNil() throws -> Bool {
        guard position < bodyEnd else { return false }
        if state.reader.base.load(fromByteOffset: position, as: UInt8.self) == ValueKind.null.rawValue {
            position += 1
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        let (s, e) = try next(Bool.self)
        let key = IndexKey(currentIndex - 1)
        return try state.run(Bool.self, key) { () throws(CompactDecodingError) in try state.readBool(s, e) }
    }

    mutating func decode(_ type: String.Type) throws -> String {
        let (s, e) = try next(String.self)
        let key = IndexKey(currentIndex - 1)
        return try state.run(String.self, key) { () throws(CompactDecodingError) in try state.readString(s, e) }
    }

    mutating func decode(_ type: Double.Type) throws -> Double {
        let (s, e) = try next(Double.self)
        let key = IndexKey(currentIndex - 1)
        return try state.run(Double.self, key) { () throws(CompactDecodingError) in try state.readDouble(s, e) }
    }

    mutating func decode(_ type: Float.Type) throws -> Float {
        let (s, e) = try next(Float.self)
        let key = IndexKey(currentIndex - 1)
        return try state.run(Float.self, key) { () throws(CompactDecodingError) in try state.readFloat(s, e) }
    }

    mutating func decode(_ type: Int.Type) throws -> Int {
        let (s, e) = try next(Int.self)
        let key = IndexKey(currentIndex - 1)
        guard let value = try state.run(Int.self, key, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int(exactly: $0) })
        else { throw state.outOfRange(Int.self, key) }
        return value
    }

    mutating func decode(_ type: Int8.Type) throws -> Int8 {
        let (s, e) = try next(Int8.self)
        let key = IndexKey(currentIndex - 1)
        guard let value = try state.run(Int8.self, key, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int8(exactly: $0) })
        else { throw state.outOfRange(Int8.self, key) }
        return value
    }

    mutating func decode(_ type: Int16.Type) throws -> Int16 {
        let (s, e) = try next(Int16.self)
        let key = IndexKey(currentIndex - 1)
        guard let value = try state.run(Int16.self, key, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int16(exactly: $0) })
        else { throw state.outOfRange(Int16.self, key) }
        return value
    }

    mutating func decode(_ type: Int32.Type) throws -> Int32 {
        let (s, e) = try next(Int32.self)
        let key = IndexKey(currentIndex - 1)
        guard let value = try state.run(Int32.self, key, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int32(exactly: $0) })
        else { throw state.outOfRange(Int32.self, key) }
        return value
    }

    mutating func decode(_ type: Int64.Type) throws -> Int64 {
        let (s, e) = try next(Int64.self)
        let key = IndexKey(currentIndex - 1)
        guard let value = try state.run(Int64.self, key, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int64(exactly: $0) })
        else { throw state.outOfRange(Int64.self, key) }
        return value
    }

    mutating func decode(_ type: UInt.Type) throws -> UInt {
        let (s, e) = try next(UInt.self)
        let key = IndexKey(currentIndex - 1)
        guard let value = try state.run(UInt.self, key, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt(exactly: $0) })
        else { throw state.outOfRange(UInt.self, key) }
        return value
    }

    mutating func decode(_ type: UInt8.Type) throws -> UInt8 {
        let (s, e) = try next(UInt8.self)
        let key = IndexKey(currentIndex - 1)
        guard let value = try state.run(UInt8.self, key, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt8(exactly: $0) })
        else { throw state.outOfRange(UInt8.self, key) }
        return value
    }

    mutating func decode(_ type: UInt16.Type) throws -> UInt16 {
        let (s, e) = try next(UInt16.self)
        let key = IndexKey(currentIndex - 1)
        guard let value = try state.run(UInt16.self, key, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt16(exactly: $0) })
        else { throw state.outOfRange(UInt16.self, key) }
        return value
    }

    mutating func decode(_ type: UInt32.Type) throws -> UInt32 {
        let (s, e) = try next(UInt32.self)
        let key = IndexKey(currentIndex - 1)
        guard let value = try state.run(UInt32.self, key, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt32(exactly: $0) })
        else { throw state.outOfRange(UInt32.self, key) }
        return value
    }

    mutating func decode(_ type: UInt64.Type) throws -> UInt64 {
        let (s, e) = try next(UInt64.self)
        let key = IndexKey(currentIndex - 1)
        guard let value = try state.run(UInt64.self, key, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt64(exactly: $0) })
        else { throw state.outOfRange(UInt64.self, key) }
        return value
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (s, e) = try next(T.self)
        return try state.decodeValue(T.self, s, e, key: IndexKey(currentIndex - 1))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (s, e) = try next(Any.self)
        let slot = min(state.depth + 1, state.hintBody.count - 1)
        return try state.nested(s, e, IndexKey(currentIndex - 1)) {
            try KeyedDecodingContainer(KeyedContainerDecoder<NestedKey>(state: state, slot: slot))
        }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (s, e) = try next(Any.self)
        return try state.nested(s, e, IndexKey(currentIndex - 1)) { try UnkeyedContainerDecoder(state: state) }
    }

    mutating func superDecoder() throws -> any Decoder {
        let (s, e) = try next(Any.self)
        return state.detached(s, e, IndexKey(currentIndex - 1))
    }
}

/// Reads the current value.
struct SingleValueDecoder: SingleValueDecodingContainer {
    let state: DecoderState
    let start: Int
    let end: Int
    var codingPath: [any CodingKey] { state.path }

    func decodeNil() -> Bool {
        (try? state.isNull(start, end)) ?? false
    }

    func decode(_ type: Bool.Type) throws -> Bool {
        let s = start, e = end
        return try state.run(Bool.self, nil) { () throws(CompactDecodingError) in try state.readBool(s, e) }
    }

    func decode(_ type: String.Type) throws -> String {
        let s = start, e = end
        return try state.run(String.self, nil) { () throws(CompactDecodingError) in try state.readString(s, e) }
    }

    func decode(_ type: Double.Type) throws -> Double {
        let s = start, e = end
        return try state.run(Double.self, nil) { () throws(CompactDecodingError) in try state.readDouble(s, e) }
    }

    func decode(_ type: Float.Type) throws -> Float {
        let s = start, e = end
        return try state.run(Float.self, nil) { () throws(CompactDecodingError) in try state.readFloat(s, e) }
    }

    func decode(_ type: Int.Type) throws -> Int {
        let s = start, e = end
        guard let value = try state.run(Int.self, nil, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int(exactly: $0) })
        else { throw state.outOfRange(Int.self, nil) }
        return value
    }

    func decode(_ type: Int8.Type) throws -> Int8 {
        let s = start, e = end
        guard let value = try state.run(Int8.self, nil, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int8(exactly: $0) })
        else { throw state.outOfRange(Int8.self, nil) }
        return value
    }

    func decode(_ type: Int16.Type) throws -> Int16 {
        let s = start, e = end
        guard let value = try state.run(Int16.self, nil, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int16(exactly: $0) })
        else { throw state.outOfRange(Int16.self, nil) }
        return value
    }

    func decode(_ type: Int32.Type) throws -> Int32 {
        let s = start, e = end
        guard let value = try state.run(Int32.self, nil, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int32(exactly: $0) })
        else { throw state.outOfRange(Int32.self, nil) }
        return value
    }

    func decode(_ type: Int64.Type) throws -> Int64 {
        let s = start, e = end
        guard let value = try state.run(Int64.self, nil, { () throws(CompactDecodingError) in try state.readInt64(s, e) }).flatMap({ Int64(exactly: $0) })
        else { throw state.outOfRange(Int64.self, nil) }
        return value
    }

    func decode(_ type: UInt.Type) throws -> UInt {
        let s = start, e = end
        guard let value = try state.run(UInt.self, nil, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt(exactly: $0) })
        else { throw state.outOfRange(UInt.self, nil) }
        return value
    }

    func decode(_ type: UInt8.Type) throws -> UInt8 {
        let s = start, e = end
        guard let value = try state.run(UInt8.self, nil, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt8(exactly: $0) })
        else { throw state.outOfRange(UInt8.self, nil) }
        return value
    }

    func decode(_ type: UInt16.Type) throws -> UInt16 {
        let s = start, e = end
        guard let value = try state.run(UInt16.self, nil, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt16(exactly: $0) })
        else { throw state.outOfRange(UInt16.self, nil) }
        return value
    }

    func decode(_ type: UInt32.Type) throws -> UInt32 {
        let s = start, e = end
        guard let value = try state.run(UInt32.self, nil, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt32(exactly: $0) })
        else { throw state.outOfRange(UInt32.self, nil) }
        return value
    }

    func decode(_ type: UInt64.Type) throws -> UInt64 {
        let s = start, e = end
        guard let value = try state.run(UInt64.self, nil, { () throws(CompactDecodingError) in try state.readUInt64(s, e) }).flatMap({ UInt64(exactly: $0) })
        else { throw state.outOfRange(UInt64.self, nil) }
        return value
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try state.decodeValue(T.self, start, end, key: nil)
    }
}

extension DecoderState {
    /// Builds a container for the value at `s..<e` while the window points there, then restores it.
    /// The container keeps its own range, so it stays valid after the window moves on.
    func nested<R>(_ s: Int, _ e: Int, _ key: any CodingKey, _ body: () throws -> R) throws -> R {
        let savedStart = start
        let savedEnd = end
        start = s
        end = e
        steps.append(.key(key))
        defer {
            steps.removeLast()
            start = savedStart
            end = savedEnd
        }
        guard depth + 1 <= depthLimit else {
            throw CompactDecodingError(.depthLimitExceeded, codingPath: pathString(path), offset: s)
        }
        return try body()
    }

    /// A separate decoder for `superDecoder`, which may be used while this one moves on.
    func detached(_ s: Int, _ e: Int, _ key: any CodingKey) -> any Decoder {
        let other = DecoderState(
            reader: reader, names: names, strings: strings, start: s, end: e,
            options: CompactDecoder.Options(depthLimit: depthLimit, userInfo: userInfoStorage))
        other.steps = steps + [.key(key)]
        other.depth = depth + 1
        return other
    }
}
