import Foundation
import Synchronization

/// Remembers the field ids of one `CodingKey` type, in the order the keys were first seen, so that
/// encoding a field usually costs one string comparison instead of a hash lookup.
final class KeyIDCache {
    @exclusivity(unchecked) var names: [String] = []
    @exclusivity(unchecked) var ids: [UInt32] = []
    /// The standard library encodes dictionaries through `_DictionaryCodingKey`: those keys are data,
    /// written inline as a sorted map, never interned as field names.
    let isDictionaryKey: Bool

    init(isDictionaryKey: Bool) { self.isDictionaryKey = isDictionaryKey }
}

/// Remembers, process-wide, which key types are the standard library's dictionary keys
/// (`String(reflecting:)` is far too slow to call per record).
enum DictionaryKeyTypes {
    private static let known = Locked<[ObjectIdentifier: Bool]>([:])

    static func isDictionaryKey(_ type: any CodingKey.Type) -> Bool {
        let id = ObjectIdentifier(type)
        if let known = known.withLock({ $0[id] }) { return known }
        let answer = String(reflecting: type) == "Swift._DictionaryCodingKey"
        known.withLock { $0[id] = answer }
        return answer
    }
}

/// The key caches of one encode call, by key type.
struct KeyCaches {
    var types: [ObjectIdentifier] = []
    var caches: [KeyIDCache] = []
    /// The field ids of ``CompactKeySet``s, by key set.
    var keySets: [ObjectIdentifier] = []
    var keySetIDs: [KeySetIDs] = []
    /// The ids of interned values.
    let values = InternedValueCache()
}

/// The field ids of one ``CompactKeySet`` in one field table; `unresolved` until first written.
@usableFromInline final class KeySetIDs {
    @inlinable static var unresolved: UInt32 { .max }
    @usableFromInline let keys: CompactKeySet
    /// One id per key; a raw buffer so that reading an id costs no reference counting.
    @usableFromInline let ids: UnsafeMutablePointer<UInt32>
    /// One flag per key: whether its string values are interned (``CompactKeySet/internedKeys``).
    @usableFromInline let interned: UnsafeMutablePointer<Bool>
    @usableFromInline let count: Int

    init(keys: CompactKeySet) {
        self.keys = keys
        count = keys.names.count
        ids = .allocate(capacity: max(count, 1))
        ids.initialize(repeating: KeySetIDs.unresolved, count: max(count, 1))
        interned = .allocate(capacity: max(count, 1))
        interned.initialize(repeating: false, count: max(count, 1))
        for (index, flag) in keys.internedKeys.enumerated() { interned[index] = flag }
    }

    deinit {
        ids.deallocate()
        interned.deallocate()
    }
}

/// Keeps the key caches of the last finished encode call, so the next call with the same field table
/// skips hashing names. A call takes the caches out (so concurrent calls never share a mutable cache)
/// and puts them back when it succeeds.
final class EncoderMemo: Sendable {
    private struct Stash: @unchecked Sendable {
        // @unchecked: the caches are only touched by the one call that took the stash out.
        var names: [String]
        var caches: KeyCaches
    }

    private let stash = Locked<Stash?>(nil)
    /// An encoder state kept for ``CompactEncoder/withEncoded(_:fields:_:)``, whose bytes never
    /// leave the call: the next call reuses its buffers instead of allocating them.
    /// Its key caches stay in it, valid while the table's names are `names` (the same storage).
    private let spare = Locked<(state: EncoderState, names: [String])?>(nil)
    /// About the largest record size seen lately (at most ``sizeHintLimit``): buffers start this
    /// big, so that a typical record never outgrows (and copies) its buffer. It decays, so one big
    /// record is soon forgotten, and its cap keeps a huge one from making every buffer huge.
    private let recentSize = Atomic<Int>(0)

    /// The buffer capacity to start a record with: at least `minimum`.
    func capacity(atLeast minimum: Int) -> Int {
        max(minimum, recentSize.load(ordering: .relaxed))
    }

    /// Notes the size of a finished record.
    func noteSize(_ size: Int) {
        let recent = recentSize.load(ordering: .relaxed)
        let decayed = recent - recent / 64
        // Racing updates from several threads may lose one: it is only a hint.
        recentSize.store(min(EncoderMemo.sizeHintLimit, max(decayed, size + size / 16)), ordering: .relaxed)
    }

    /// The largest starting capacity the size hint gives.
    static let sizeHintLimit = 64 << 10

    /// The caches, when they were made against exactly `names` (the same array storage, so the same ids).
    func take(for names: [String]) -> KeyCaches {
        stash.withLock { stash in
            guard let current = stash, sameStorage(current.names, names) else { return KeyCaches() }
            stash = nil
            return current.caches
        }
    }

    func put(_ caches: KeyCaches, names: [String]) {
        let value = Stash(names: names, caches: caches)
        stash.withLock { $0 = value }
    }

    /// The spare state, if no other call holds it, ready to encode against `fields`: with its
    /// key caches when they were made for the same names, else with the stash's or new ones.
    func takeSpare(for fields: FieldTable) -> EncoderState? {
        guard let (state, names) = spare.withLock({ spare in
            defer { spare = nil }
            return spare
        }) else { return nil }
        let caches = sameStorage(names, fields.names) ? state.keyCaches : take(for: fields.names)
        state.restart(fields: fields, keyCaches: caches)
        return state
    }

    /// Keeps `state`, which encoded with `names`, for the next call, unless one huge record
    /// grew its buffers.
    func putSpare(_ state: EncoderState, names: [String]) {
        guard state.writer.bytes.capacity <= EncoderMemo.sizeHintLimit else { return }
        spare.withLock { $0 = (state, names) }
    }
}

/// One container whose body length is not written yet.
struct OpenContainer {
    var start: Int
    /// Offsets of the entries of a dictionary map, sorted when the map closes.
    var mapEntries: [Int]?
}

/// The single `Encoder` object behind one `encode` call; containers write straight into its buffer.
///
/// Containers are written in a stream, so a container is finished (its length written) as soon as
/// its parent writes again. Writing to a finished container is an error, never corruption.
@usableFromInline final class EncoderState: Encoder {
    @exclusivity(unchecked) var writer: ByteWriter
    @exclusivity(unchecked) var fields: FieldTable
    @exclusivity(unchecked) var open: [OpenContainer] = []
    /// Key caches by key type; a short list scanned linearly (a record has a handful of key types).
    @exclusivity(unchecked) var keyCaches: KeyCaches
    @exclusivity(unchecked) var path: [any CodingKey] = []
    /// The container opened by the value being encoded now, so repeated `container(keyedBy:)` calls share it.
    @exclusivity(unchecked) var levelContainer: Int?
    @exclusivity(unchecked) var deferredError: EncodingError?
    let userInfoStorage: [CodingUserInfoKey: any Sendable]

    init(
        fields: FieldTable, capacity: Int, userInfo: [CodingUserInfoKey: any Sendable],
        keyCaches: KeyCaches = KeyCaches()
    ) {
        self.writer = ByteWriter(capacity: capacity)
        self.fields = fields
        self.keyCaches = keyCaches
        self.userInfoStorage = userInfo
        open.reserveCapacity(16)
    }

    /// Makes a used state ready for the next record, keeping its buffers' capacity.
    func restart(fields: FieldTable, keyCaches: KeyCaches) {
        writer.restart()
        self.fields = fields
        self.keyCaches = keyCaches
        open.removeAll(keepingCapacity: true)
        path.removeAll()
        levelContainer = nil
        deferredError = nil
    }

    @usableFromInline var codingPath: [any CodingKey] { path }
    @usableFromInline var userInfo: [CodingUserInfoKey: Any] { userInfoStorage }

    // MARK: Values

    /// Encodes any value at the current position, with fast paths for the native kinds.
    @inline(__always) func encodeValue<T: Encodable>(_ value: T) throws {
        if T.self == String.self { return writer.string(unsafeBitCast(value, to: String.self)) }
        if T.self == Int.self { return writer.int(Int64(unsafeBitCast(value, to: Int.self))) }
        if T.self == Bool.self { return writer.bool(unsafeBitCast(value, to: Bool.self)) }
        if T.self == Double.self { return writer.double(unsafeBitCast(value, to: Double.self)) }
        if T.self == Date.self { return writer.date(unsafeBitCast(value, to: Date.self)) }
        if T.self == URL.self { return writer.string((value as! URL).absoluteString, kind: .url) }
        if T.self == Data.self { return writer.data(value as! Data) }
        if T.self == Int64.self { return writer.int(unsafeBitCast(value, to: Int64.self)) }
        if T.self == UInt64.self { return writer.uint(unsafeBitCast(value, to: UInt64.self)) }
        if T.self == UInt.self { return writer.uint(UInt64(unsafeBitCast(value, to: UInt.self))) }
        if T.self == Float.self { return writer.float(unsafeBitCast(value, to: Float.self)) }
        if T.self == Int32.self { return writer.int(Int64(unsafeBitCast(value, to: Int32.self))) }
        if T.self == UInt32.self { return writer.uint(UInt64(unsafeBitCast(value, to: UInt32.self))) }
        if T.self == Int16.self { return writer.int(Int64(unsafeBitCast(value, to: Int16.self))) }
        if T.self == UInt16.self { return writer.uint(UInt64(unsafeBitCast(value, to: UInt16.self))) }
        if T.self == Int8.self { return writer.int(Int64(unsafeBitCast(value, to: Int8.self))) }
        if T.self == UInt8.self { return writer.uint(UInt64(unsafeBitCast(value, to: UInt8.self))) }
        if T.self == CompactValue.self { return try writeGeneric(unsafeBitCast(value, to: CompactValue.self)) }
        try encodeNested(value)
    }

    func encodeNested<T: Encodable>(_ value: T) throws {
        let level = open.count
        let savedLevel = levelContainer
        let before = writer.bytes.count
        levelContainer = nil
        try value.encode(to: self)
        closeContainers(downTo: level)
        levelContainer = savedLevel
        if writer.bytes.count == before {
            // A type that encoded nothing is an empty object, so every key still has a value.
            let start = writer.openContainer(.object)
            writer.closeContainer(at: start)
        }
    }

    func writeGeneric(_ value: CompactValue) throws {
        switch value {
        case .null: writer.null()
        case .bool(let v): writer.bool(v)
        case .int(let v): writer.int(v)
        case .uint(let v): writer.uint(v)
        case .double(let v): writer.double(v)
        case .string(let v): writer.string(v)
        case .bytes(let v): writer.data(v)
        case .date(let v): writer.date(v)
        case .url(let v): writer.string(v, kind: .url)
        case .array(let items):
            let start = writer.openContainer(.array)
            for item in items { try writeGeneric(item) }
            writer.closeContainer(at: start)
        case .object(let entries):
            let start = writer.openContainer(.object)
            for entry in entries {
                writer.varint(UInt64(fields.intern(entry.key)))
                try writeGeneric(entry.value)
            }
            writer.closeContainer(at: start)
        }
    }

    // MARK: Containers

    func openContainer(_ kind: ValueKind) -> Int {
        let start = writer.openContainer(kind)
        if kind == .map { writer.mapDepth += 1 }
        open.append(OpenContainer(start: start, mapEntries: kind == .map ? [] : nil))
        return open.count - 1
    }

    func closeContainers(downTo level: Int) {
        while open.count > level {
            let container = open.removeLast()
            if let entries = container.mapEntries {
                sortMap(start: container.start, entries: entries)
                writer.mapDepth -= 1
            }
            writer.closeContainer(at: container.start)
        }
    }

    /// Makes the container at `index` (tag at `start`) the one being written, finishing its children.
    @inline(__always) func resume(_ index: Int, start: Int) throws {
        if open.count == index + 1 && open[index].start == start { return }
        guard index < open.count, open[index].start == start else {
            throw EncodingError.invalidValue(
                start,
                EncodingError.Context(
                    codingPath: path,
                    debugDescription:
                        "A container was written to after its parent or a sibling continued; QuireCodec writes containers in order."
                ))
        }
        closeContainers(downTo: index + 1)
    }

    func keyCache<Key: CodingKey>(for type: Key.Type) -> KeyIDCache {
        let id = ObjectIdentifier(type)
        for index in keyCaches.types.indices where keyCaches.types[index] == id { return keyCaches.caches[index] }
        let cache = KeyIDCache(isDictionaryKey: DictionaryKeyTypes.isDictionaryKey(type))
        keyCaches.types.append(id)
        keyCaches.caches.append(cache)
        return cache
    }

    @usableFromInline func keySetIDs(for keys: CompactKeySet) -> KeySetIDs {
        let id = ObjectIdentifier(keys)
        for index in keyCaches.keySets.indices where keyCaches.keySets[index] == id { return keyCaches.keySetIDs[index] }
        // A set made at every use (a computed `compactKeys`): found by what it holds, or every
        // object of a large array would add an entry to search.
        for ids in keyCaches.keySetIDs where ids.keys.names == keys.names && ids.keys.internedKeys == keys.internedKeys {
            return ids
        }
        let ids = KeySetIDs(keys: keys)
        keyCaches.keySets.append(id)
        keyCaches.keySetIDs.append(ids)
        return ids
    }

    /// Writes `value` as an object through its hand-written conformance.
    func encodeCompact<T: CompactEncodable>(_ value: T) throws {
        let ids = keySetIDs(for: T.compactKeys)
        var object = CompactObjectWriter(state: self, ids: ids)
        swap(&object.out, &writer)
        defer { swap(&object.out, &writer) }
        try object.object(value, ids: ids)
    }

    @inline(__always) func fieldID(_ name: String, cache: KeyIDCache, next: inout Int) -> UInt32 {
        let count = cache.names.count
        // Synthesized coding keys return the same string literal every time, so comparing the string's
        // two words finds the cached key without a character comparison; fall back to `==` on a miss.
        let bits = unsafeBitCast(name, to: (UInt64, UInt64).self)
        var index = next
        for _ in 0..<count {
            if index >= count { index = 0 }
            let cached = unsafeBitCast(cache.names[index], to: (UInt64, UInt64).self)
            if cached == bits {
                next = index + 1
                return cache.ids[index]
            }
            index += 1
        }
        return fieldIDSlow(name, cache: cache, next: &next)
    }

    func fieldIDSlow(_ name: String, cache: KeyIDCache, next: inout Int) -> UInt32 {
        let count = cache.names.count
        var index = next
        for _ in 0..<count {
            if index >= count { index = 0 }
            // By bytes: `==` takes canonically equivalent names for one (ExactText).
            if cache.names[index].utf8.elementsEqual(name.utf8) {
                next = index + 1
                return cache.ids[index]
            }
            index += 1
        }
        let id = fields.intern(name)
        cache.names.append(name)
        cache.ids.append(id)
        next = cache.names.count
        return id
    }

    /// Writes a dictionary key and remembers where the entry starts, for sorting.
    func mapKey(_ key: some CodingKey, container index: Int) {
        open[index].mapEntries!.append(writer.bytes.count)
        // Integer keys are written as integers only in canonical form, so the string key "01" stays a string.
        if let int = key.intValue, String(int) == key.stringValue {
            writer.longInt(Int64(int))
        } else {
            writer.string(key.stringValue, kind: .string)
        }
    }

    /// Rewrites a map body with its entries in key order (integers numerically, strings by UTF-8 bytes),
    /// so equal dictionaries always give equal bytes.
    func sortMap(start: Int, entries: [Int]) {
        guard entries.count > 1 else { return }
        let end = writer.bytes.count
        let body = Array(writer.bytes[(start + 2)..<end])
        let offset = start + 2
        var ranges: [(key: CompactValue, range: Range<Int>)] = []
        ranges.reserveCapacity(entries.count)
        body.withUnsafeBytes { raw in
            let reader = ByteReader(raw)
            for (i, entryStart) in entries.enumerated() {
                let entryEnd = i + 1 < entries.count ? entries[i + 1] : end
                // Map keys are always in the long forms, so they never need the string table.
                let strings = StringTable(reader: reader, rootStart: 0, rootEnd: 0, depthLimit: 2, values: [])
                let key = (try? GenericReader(reader: reader, names: [], depthLimit: 2, strings: strings)
                    .read(at: entryStart - offset, end: entryEnd - offset, depth: 0)) ?? .null
                ranges.append((key, (entryStart - offset)..<(entryEnd - offset)))
            }
        }
        ranges.sort { a, b in mapKeyPrecedes(a.key, b.key) }
        writer.bytes.removeSubrange(offset..<end)
        for entry in ranges { writer.bytes.append(contentsOf: body[entry.range]) }
    }

    // MARK: Encoder

    @usableFromInline func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let cache = keyCache(for: type)
        if let index = levelContainer, index < open.count {
            return KeyedEncodingContainer(
                KeyedContainerEncoder<Key>(state: self, index: index, start: open[index].start, cache: cache))
        }
        let index = openContainer(cache.isDictionaryKey ? .map : .object)
        levelContainer = index
        return KeyedEncodingContainer(
            KeyedContainerEncoder<Key>(state: self, index: index, start: open[index].start, cache: cache))
    }

    @usableFromInline func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let index = openContainer(.array)
        levelContainer = index
        return UnkeyedContainerEncoder(state: self, index: index, start: open[index].start)
    }

    @usableFromInline func singleValueContainer() -> any SingleValueEncodingContainer { SingleValueEncoder(state: self) }
}

/// Key order in maps: integers before strings, integers numerically, strings by UTF-8 bytes.
func mapKeyPrecedes(_ a: CompactValue, _ b: CompactValue) -> Bool {
    switch (a, b) {
    case (.int(let x), .int(let y)): return x < y
    case (.int, _): return true
    case (_, .int): return false
    case (.string(let x), .string(let y)): return x.utf8.lexicographicallyPrecedes(y.utf8)
    default: return false
    }
}
