/// Writes an object (field id, value pairs) or, for dictionaries, a map (key value, value pairs).
struct KeyedContainerEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let state: EncoderState
    let index: Int
    let start: Int
    let cache: KeyIDCache
    var next = 0

    init(state: EncoderState, index: Int, start: Int, cache: KeyIDCache) {
        self.state = state
        self.index = index
        self.start = start
        self.cache = cache
    }

    var codingPath: [any CodingKey] { state.path }

    @inline(__always) mutating func begin(_ key: Key) throws {
        try state.resume(index, start: start)
        if cache.isDictionaryKey {
            state.mapKey(key, container: index)
        } else {
            state.writer.varint(UInt64(state.fieldID(key.stringValue, cache: cache, next: &next)))
        }
    }

    mutating func encodeNil(forKey key: Key) throws {
        try begin(key)
        state.writer.null()
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        try begin(key)
        state.writer.bool(value)
    }

    mutating func encode(_ value: String, forKey key: Key) throws {
        try begin(key)
        state.writer.string(value)
    }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        try begin(key)
        state.writer.double(value)
    }

    mutating func encode(_ value: Float, forKey key: Key) throws {
        try begin(key)
        state.writer.float(value)
    }

    mutating func encode(_ value: Int, forKey key: Key) throws {
        try begin(key)
        state.writer.int(Int64(value))
    }

    mutating func encode(_ value: Int8, forKey key: Key) throws {
        try begin(key)
        state.writer.int(Int64(value))
    }

    mutating func encode(_ value: Int16, forKey key: Key) throws {
        try begin(key)
        state.writer.int(Int64(value))
    }

    mutating func encode(_ value: Int32, forKey key: Key) throws {
        try begin(key)
        state.writer.int(Int64(value))
    }

    mutating func encode(_ value: Int64, forKey key: Key) throws {
        try begin(key)
        state.writer.int(value)
    }

    mutating func encode(_ value: UInt, forKey key: Key) throws {
        try begin(key)
        state.writer.uint(UInt64(value))
    }

    mutating func encode(_ value: UInt8, forKey key: Key) throws {
        try begin(key)
        state.writer.uint(UInt64(value))
    }

    mutating func encode(_ value: UInt16, forKey key: Key) throws {
        try begin(key)
        state.writer.uint(UInt64(value))
    }

    mutating func encode(_ value: UInt32, forKey key: Key) throws {
        try begin(key)
        state.writer.uint(UInt64(value))
    }

    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        try begin(key)
        state.writer.uint(value)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try begin(key)
        state.path.append(key)
        defer { state.path.removeLast() }
        try state.encodeValue(value)
    }

    // Nil optionals are omitted, so a missing field and a nil field read back the same way.
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
        guard let value else { return }
        try encode(value, forKey: key)
    }

    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
        guard let value else { return }
        try encode(value, forKey: key)
    }

    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
        guard let value else { return }
        try encode(value, forKey: key)
    }

    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws {
        guard let value else { return }
        try encode(value, forKey: key)
    }

    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
        guard let value else { return }
        try encode(value, forKey: key)
    }

    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws {
        guard let value else { return }
        try encode(value, forKey: key)
    }

    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws {
        guard let value else { return }
        try encode(value, forKey: key)
    }

    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws {
        guard let value else { return }
        try encode(value, forKey: key)
    }

    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
        guard let value else { return }
        try encode(value, forKey: key)
    }

    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws {
        guard let value else { return }
        try encode(value, forKey: key)
    }

    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws {
        guard let value else { return }
        try encode(value, forKey: key)
    }

    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws {
        guard let value else { return }
        try encode(value, forKey: key)
    }

    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws {
        guard let value else { return }
        try encode(value, forKey: key)
    }

    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws {
        guard let value else { return }
        try encode(value, forKey: key)
    }

    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        guard let value else { return }
        try encode(value, forKey: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        do { try begin(key) } catch { state.deferredError = error as? EncodingError }
        let cache = state.keyCache(for: keyType)
        let nested = state.openContainer(cache.isDictionaryKey ? .map : .object)
        return KeyedEncodingContainer(
            KeyedContainerEncoder<NestedKey>(state: state, index: nested, start: state.open[nested].start, cache: cache))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        do { try begin(key) } catch { state.deferredError = error as? EncodingError }
        let nested = state.openContainer(.array)
        return UnkeyedContainerEncoder(state: state, index: nested, start: state.open[nested].start)
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(named: "super")
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        do { try begin(key) } catch { state.deferredError = error as? EncodingError }
        return SuperEncoder(state: state)
    }

    private mutating func superEncoder(named name: String) -> any Encoder {
        do {
            try state.resume(index, start: start)
            state.writer.varint(UInt64(state.fieldID(name, cache: cache, next: &next)))
        } catch { state.deferredError = error as? EncodingError }
        return SuperEncoder(state: state)
    }
}

/// Writes an array.
struct UnkeyedContainerEncoder: UnkeyedEncodingContainer {
    let state: EncoderState
    let index: Int
    let start: Int
    private(set) var count = 0

    init(state: EncoderState, index: Int, start: Int) {
        self.state = state
        self.index = index
        self.start = start
    }

    var codingPath: [any CodingKey] { state.path }

    @inline(__always) mutating func begin() throws {
        try state.resume(index, start: start)
        count += 1
    }

    mutating func encodeNil() throws {
        try begin()
        state.writer.null()
    }

    mutating func encode(_ value: Bool) throws {
        try begin()
        state.writer.bool(value)
    }

    mutating func encode(_ value: String) throws {
        try begin()
        state.writer.string(value)
    }

    mutating func encode(_ value: Double) throws {
        try begin()
        state.writer.double(value)
    }

    mutating func encode(_ value: Float) throws {
        try begin()
        state.writer.float(value)
    }

    mutating func encode(_ value: Int) throws {
        try begin()
        state.writer.int(Int64(value))
    }

    mutating func encode(_ value: Int8) throws {
        try begin()
        state.writer.int(Int64(value))
    }

    mutating func encode(_ value: Int16) throws {
        try begin()
        state.writer.int(Int64(value))
    }

    mutating func encode(_ value: Int32) throws {
        try begin()
        state.writer.int(Int64(value))
    }

    mutating func encode(_ value: Int64) throws {
        try begin()
        state.writer.int(value)
    }

    mutating func encode(_ value: UInt) throws {
        try begin()
        state.writer.uint(UInt64(value))
    }

    mutating func encode(_ value: UInt8) throws {
        try begin()
        state.writer.uint(UInt64(value))
    }

    mutating func encode(_ value: UInt16) throws {
        try begin()
        state.writer.uint(UInt64(value))
    }

    mutating func encode(_ value: UInt32) throws {
        try begin()
        state.writer.uint(UInt64(value))
    }

    mutating func encode(_ value: UInt64) throws {
        try begin()
        state.writer.uint(value)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try begin()
        state.path.append(IndexKey(count - 1))
        defer { state.path.removeLast() }
        try state.encodeValue(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        do { try begin() } catch { state.deferredError = error as? EncodingError }
        let cache = state.keyCache(for: keyType)
        let nested = state.openContainer(cache.isDictionaryKey ? .map : .object)
        return KeyedEncodingContainer(
            KeyedContainerEncoder<NestedKey>(state: state, index: nested, start: state.open[nested].start, cache: cache))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        do { try begin() } catch { state.deferredError = error as? EncodingError }
        let nested = state.openContainer(.array)
        return UnkeyedContainerEncoder(state: state, index: nested, start: state.open[nested].start)
    }

    mutating func superEncoder() -> any Encoder {
        do { try begin() } catch { state.deferredError = error as? EncodingError }
        return SuperEncoder(state: state)
    }
}

/// Writes one value at the current position.
struct SingleValueEncoder: SingleValueEncodingContainer {
    let state: EncoderState
    var codingPath: [any CodingKey] { state.path }

    mutating func encodeNil() throws { state.writer.null() }

    mutating func encode(_ value: Bool) throws { state.writer.bool(value) }

    mutating func encode(_ value: String) throws { state.writer.string(value) }

    mutating func encode(_ value: Double) throws { state.writer.double(value) }

    mutating func encode(_ value: Float) throws { state.writer.float(value) }

    mutating func encode(_ value: Int) throws { state.writer.int(Int64(value)) }

    mutating func encode(_ value: Int8) throws { state.writer.int(Int64(value)) }

    mutating func encode(_ value: Int16) throws { state.writer.int(Int64(value)) }

    mutating func encode(_ value: Int32) throws { state.writer.int(Int64(value)) }

    mutating func encode(_ value: Int64) throws { state.writer.int(value) }

    mutating func encode(_ value: UInt) throws { state.writer.uint(UInt64(value)) }

    mutating func encode(_ value: UInt8) throws { state.writer.uint(UInt64(value)) }

    mutating func encode(_ value: UInt16) throws { state.writer.uint(UInt64(value)) }

    mutating func encode(_ value: UInt32) throws { state.writer.uint(UInt64(value)) }

    mutating func encode(_ value: UInt64) throws { state.writer.uint(value) }

    mutating func encode<T: Encodable>(_ value: T) throws { try state.encodeValue(value) }
}

/// The encoder handed out by `superEncoder`: it must encode exactly one value, which starts a fresh container.
struct SuperEncoder: Encoder {
    let state: EncoderState
    var codingPath: [any CodingKey] { state.path }
    var userInfo: [CodingUserInfoKey: Any] { state.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        state.levelContainer = nil
        return state.container(keyedBy: type)
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { state.unkeyedContainer() }
    func singleValueContainer() -> any SingleValueEncodingContainer { SingleValueEncoder(state: state) }
}

/// An array index as a coding key, for coding paths.
struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { return nil }
    init?(intValue: Int) { self.intValue = intValue }
}
