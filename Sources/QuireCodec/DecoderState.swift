import Foundation

/// One step of a decoding path. An array index stays a plain integer until a path is built:
/// pushed as `any CodingKey`, each element of an array cost a box and witness calls.
@usableFromInline enum PathStep {
    case key(any CodingKey)
    case index(Int)

    var codingKey: any CodingKey {
        switch self {
        case .key(let key): key
        case .index(let index): IndexKey(index)
        }
    }
}

/// The single `Decoder` object behind one `decode` call. It points at the value being decoded
/// (`start..<end`, tag at `start`); nested values move the window and restore it afterwards.
@usableFromInline final class DecoderState: Decoder {
    // Variables so that each thread can reuse one state for its decode calls (DecoderStateCache).
    @usableFromInline @exclusivity(unchecked) var reader: ByteReader
    @exclusivity(unchecked) var names: [String]
    /// Constant, so that reads through it need not retain it around each call (a state is reused
    /// by resetting this table, never by replacing it).
    let strings: StringTable
    @usableFromInline @exclusivity(unchecked) var depthLimit: Int
    @exclusivity(unchecked) var userInfoStorage: [CodingUserInfoKey: any Sendable]
    /// True while a decode call uses this state (a nested call on the same thread makes its own).
    @exclusivity(unchecked) var inUse = false
    /// The path down to the value being decoded, one step per level.
    @usableFromInline @exclusivity(unchecked) var steps: [PathStep] = []
    @usableFromInline @exclusivity(unchecked) var depth = 0
    @exclusivity(unchecked) var start: Int
    @exclusivity(unchecked) var end: Int
    /// Per nesting slot: the object body a hint belongs to and the entry expected next, so that fields
    /// read in the order they were written are found without scanning.
    @exclusivity(unchecked) var hintBody: [Int]
    @exclusivity(unchecked) var hintNext: [Int]
    /// The fields of every object opened so far in this call, appended as each object is validated;
    /// an object's container keeps the range of its own entries.
    @exclusivity(unchecked) var entries: [FieldEntry] = []
    /// The ``CompactKeySet``s whose field id → key position tables are kept, held (not just
    /// their addresses): the tables outlive a decode call, and a set made anew at every use (a
    /// computed `compactKeys`) would otherwise leave its address to the next one, of another type.
    @exclusivity(unchecked) var keySets: [CompactKeySet] = []
    /// Raw buffers owned by the state, so that a reader points into one without retaining it.
    @exclusivity(unchecked) var keySetTables: [UnsafeMutableBufferPointer<Int32>] = []

    init(reader: ByteReader, names: [String], strings: StringTable, start: Int, end: Int, options: CompactDecoder.Options) {
        self.reader = reader
        self.names = names
        self.strings = strings
        self.depthLimit = options.depthLimit
        self.userInfoStorage = options.userInfo
        self.start = start
        self.end = end
        // Hints are made by the first Codable container: hand-written conformances never need them.
        hintBody = []
        hintNext = []
    }

    /// Points the state at another root value, keeping its storage (and the key-set tables when
    /// `names` is the same table).
    func reset(reader: ByteReader, names: [String], values: [String?], start: Int, end: Int, options: CompactDecoder.Options) {
        // Assigned only when they change: reassigning the same table would retain and release it
        // for every record, and threads decoding with one table would fight over its reference
        // count's cache line.
        let otherNames = !sameStorage(self.names, names)
        if otherNames || keySets.count > Self.keySetLimit {
            keySets.removeAll(keepingCapacity: true)
            freeKeySetTables()
        }
        if otherNames { self.names = names }
        self.reader = reader
        strings.reset(reader: reader, rootStart: start, rootEnd: end, depthLimit: options.depthLimit, values: values)
        depthLimit = options.depthLimit
        if !(userInfoStorage.isEmpty && options.userInfo.isEmpty) { userInfoStorage = options.userInfo }
        self.start = start
        self.end = end
        steps.removeAll(keepingCapacity: true)
        depth = 0
        entries.removeAll(keepingCapacity: entries.capacity <= StringTable.retainedCapacity)
        if !hintBody.isEmpty && hintBody.count != min(depthLimit, 64) + 2 {
            hintBody = []
            hintNext = []
        }
        for slot in hintBody.indices { hintBody[slot] = -1 }
    }

    /// Makes the hint slots and entry storage that Codable containers use, on first use.
    @inline(__always) func prepareContainers() {
        guard hintBody.isEmpty else { return }
        let slots = min(depthLimit, 64) + 2
        hintBody = Array(repeating: -1, count: slots)
        hintNext = Array(repeating: 0, count: slots)
        entries.reserveCapacity(64)
    }

    @usableFromInline var codingPath: [any CodingKey] { path }
    /// The path as coding keys (built for errors and `codingPath` only).
    @usableFromInline var path: [any CodingKey] { steps.map(\.codingKey) }
    @usableFromInline var userInfo: [CodingUserInfoKey: Any] { userInfoStorage }

    // MARK: Errors

    /// Runs a read, turning format errors into errors that carry the coding path.
    @inline(__always) func run<R>(
        _ type: Any.Type, _ key: (any CodingKey)?, _ body: () throws(CompactDecodingError) -> R
    ) throws -> R {
        do {
            return try body()
        } catch {
            throw wrap(error, type, key)
        }
    }

    func fullPath(_ key: (any CodingKey)?) -> [any CodingKey] {
        guard let key else { return path }
        return path + [key]
    }

    @usableFromInline func wrap(_ error: CompactDecodingError, _ type: Any.Type, _ key: (any CodingKey)?) -> any Error {
        let codingPath = fullPath(key)
        switch error.kind {
        case .typeMismatch(let expected, let found):
            if found == "null" {
                return DecodingError.valueNotFound(
                    type,
                    .init(
                        codingPath: codingPath,
                        debugDescription: "Expected \(expected) at \(pathString(codingPath)) but found null."))
            }
            return DecodingError.typeMismatch(
                type,
                .init(
                    codingPath: codingPath,
                    debugDescription: "Expected \(expected) at \(pathString(codingPath)) but found \(found)."))
        default:
            var error = error
            error.codingPath = pathString(codingPath)
            return error
        }
    }

    @usableFromInline func outOfRange(_ type: Any.Type, _ key: (any CodingKey)?) -> DecodingError {
        let codingPath = fullPath(key)
        return DecodingError.dataCorrupted(
            .init(codingPath: codingPath, debugDescription: "Number at \(pathString(codingPath)) does not fit in \(type)."))
    }

    // MARK: Primitive reads at a value

    @inline(__always) func kind(at position: Int, end: Int) throws(CompactDecodingError) -> ValueKind {
        let tag = try reader.byte(at: position, end: end)
        guard let kind = ValueKind.of(tag) else { throw CompactDecodingError(.badKind(tag), offset: position) }
        return kind
    }

    @inline(__always) func mismatch(_ expected: String, _ found: ValueKind) -> CompactDecodingError {
        CompactDecodingError(.typeMismatch(expected: expected, found: found.name))
    }

    @usableFromInline @inline(__always) func readString(_ s: Int, _ e: Int) throws(CompactDecodingError) -> String {
        let k = try kind(at: s, end: e)
        guard StringTable.isString(k) else { throw mismatch("string", k) }
        return try strings.read(k, at: s, end: e)
    }

    @usableFromInline func readBool(_ s: Int, _ e: Int) throws(CompactDecodingError) -> Bool {
        let k = try kind(at: s, end: e)
        switch k {
        case .trueValue: return true
        case .falseValue: return false
        default: throw mismatch("bool", k)
        }
    }

    @usableFromInline @inline(__always) func readInt64(_ s: Int, _ e: Int) throws(CompactDecodingError) -> Int64? {
        let k = try kind(at: s, end: e)
        var position = s + 1
        switch k {
        case .smallInt: return unzigzag(UInt64(reader.base.load(fromByteOffset: s, as: UInt8.self) & 0x3F))
        case .int: return unzigzag(try reader.varint(&position, end: e))
        case .uint:
            let value = try reader.varint(&position, end: e)
            return value <= UInt64(Int64.max) ? Int64(value) : nil
        default: throw mismatch("integer", k)
        }
    }

    @usableFromInline func readUInt64(_ s: Int, _ e: Int) throws(CompactDecodingError) -> UInt64? {
        let k = try kind(at: s, end: e)
        var position = s + 1
        switch k {
        case .uint: return try reader.varint(&position, end: e)
        case .int, .smallInt:
            let value = k == .smallInt
                ? unzigzag(UInt64(reader.base.load(fromByteOffset: s, as: UInt8.self) & 0x3F))
                : unzigzag(try reader.varint(&position, end: e))
            return value >= 0 ? UInt64(value) : nil
        default: throw mismatch("unsigned integer", k)
        }
    }

    @usableFromInline func readDouble(_ s: Int, _ e: Int) throws(CompactDecodingError) -> Double {
        let k = try kind(at: s, end: e)
        var position = s + 1
        switch k {
        case .float64: return Double(bitPattern: try reader.fixed(UInt64.self, &position, end: e))
        case .float32: return Double(Float(bitPattern: try reader.fixed(UInt32.self, &position, end: e)))
        case .int: return Double(unzigzag(try reader.varint(&position, end: e)))
        case .smallInt: return Double(unzigzag(UInt64(reader.base.load(fromByteOffset: s, as: UInt8.self) & 0x3F)))
        case .uint: return Double(try reader.varint(&position, end: e))
        default: throw mismatch("number", k)
        }
    }

    func readFloat(_ s: Int, _ e: Int) throws(CompactDecodingError) -> Float {
        if try kind(at: s, end: e) == .float32 {
            var position = s + 1
            return Float(bitPattern: try reader.fixed(UInt32.self, &position, end: e))
        }
        return Float(try readDouble(s, e))
    }

    @usableFromInline func readDate(_ s: Int, _ e: Int) throws(CompactDecodingError) -> Date {
        let k = try kind(at: s, end: e)
        var position = s + 1
        switch k {
        case .dateWholeSeconds:
            return Date(timeIntervalSince1970: Double(unzigzag(try reader.varint(&position, end: e))))
        case .dateMillis:
            return Date(timeIntervalSince1970: Double(unzigzag(try reader.varint(&position, end: e))) / 1000)
        case .dateSeconds:
            return Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.fixed(UInt64.self, &position, end: e)))
        default: throw mismatch("date", k)
        }
    }

    @usableFromInline func readURL(_ s: Int, _ e: Int) throws(CompactDecodingError) -> URL {
        let k = try kind(at: s, end: e)
        guard k == .url || StringTable.isString(k) else { throw mismatch("url", k) }
        let string = try strings.read(k, at: s, end: e)
        guard let url = URL(string: string) else { throw mismatch("url", .string) }
        return url
    }

    @usableFromInline func readBytes(_ s: Int, _ e: Int) throws(CompactDecodingError) -> UnsafeRawBufferPointer {
        let k = try kind(at: s, end: e)
        guard k == .bytes else { throw mismatch("bytes", k) }
        var position = s + 1
        let length = try reader.length(&position, end: e)
        return UnsafeRawBufferPointer(start: reader.base + position, count: length)
    }

    @inline(__always) func isNull(_ s: Int, _ e: Int) throws(CompactDecodingError) -> Bool {
        try reader.byte(at: s, end: e) == ValueKind.null.rawValue
    }

    // MARK: Values

    /// Decodes a value whose tag is at `s` (ending at `e`), reached through `key`.
    @inline(__always) func decodeValue<T: Decodable>(_ type: T.Type, _ s: Int, _ e: Int, key: (any CodingKey)?) throws -> T {
        if T.self == String.self { return unsafeBitCast(try run(T.self, key) { () throws(CompactDecodingError) in try readString(s, e) }, to: T.self) }
        if T.self == Int.self {
            guard let v = try run(T.self, key, { () throws(CompactDecodingError) in try readInt64(s, e) }).flatMap({ Int(exactly: $0) }) else { throw outOfRange(T.self, key) }
            return unsafeBitCast(v, to: T.self)
        }
        if T.self == Date.self { return unsafeBitCast(try run(T.self, key) { () throws(CompactDecodingError) in try readDate(s, e) }, to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try run(T.self, key) { () throws(CompactDecodingError) in try readBool(s, e) }, to: T.self) }
        if T.self == Double.self { return unsafeBitCast(try run(T.self, key) { () throws(CompactDecodingError) in try readDouble(s, e) }, to: T.self) }
        if T.self == URL.self { return try run(T.self, key) { () throws(CompactDecodingError) in try readURL(s, e) } as! T }
        if T.self == Data.self { return try run(T.self, key) { () throws(CompactDecodingError) in Data(try readBytes(s, e)) } as! T }
        if T.self == CompactValue.self {
            return unsafeBitCast(
                try run(T.self, key) { () throws(CompactDecodingError) in
                    try GenericReader(reader: reader, names: names, depthLimit: depthLimit, strings: strings)
                        .read(at: s, end: e, depth: depth)
                }, to: T.self)
        }
        let savedStart = start
        let savedEnd = end
        start = s
        end = e
        depth += 1
        if let key { steps.append(.key(key)) }
        defer {
            if key != nil { steps.removeLast() }
            depth -= 1
            start = savedStart
            end = savedEnd
        }
        if depth > depthLimit {
            throw CompactDecodingError(.depthLimitExceeded, codingPath: pathString(path), offset: s)
        }
        return try T(from: self)
    }

    // MARK: Hand-written conformances

    /// The field id → key position table of `keys` for the current names; valid until the state
    /// is reset for other names (a decode call's readers never outlive it).
    @usableFromInline func decodeTable(for keys: CompactKeySet) -> UnsafeBufferPointer<Int32> {
        for index in keySets.indices where keySets[index] === keys { return UnsafeBufferPointer(keySetTables[index]) }
        // A set made at every use (a computed `compactKeys`) is another object each time: found
        // by its names, or every object of a large array would add a table.
        for index in keySets.indices where keySets[index].names == keys.names { return UnsafeBufferPointer(keySetTables[index]) }
        let table = keys.decodeTable(for: names)
        let buffer = UnsafeMutableBufferPointer<Int32>.allocate(capacity: table.count)
        _ = buffer.initialize(from: table)
        keySets.append(keys)
        keySetTables.append(buffer)
        return UnsafeBufferPointer(buffer)
    }

    /// How many key sets' tables are kept between decode calls: sets made anew at every use
    /// would otherwise pile up (a `static let` is one set for good).
    static let keySetLimit = 64

    private func freeKeySetTables() {
        for table in keySetTables { table.deallocate() }
        keySetTables.removeAll(keepingCapacity: true)
    }

    deinit { freeKeySetTables() }

    /// Decodes the object whose tag is at `s` (ending at `e`) through `T`'s hand-written conformance,
    /// one `step` down the path (none for the root).
    @inlinable func decodeCompact<T: CompactDecodable>(_ type: T.Type, _ s: Int, _ e: Int, step: PathStep?) throws -> T {
        let body = try enterObject(T.self, s, e, step: step)
        defer { leaveObject(step: step) }
        let keys = T.compactKeys
        var object = CompactObjectReader(state: self, keys: keys, table: decodeTable(for: keys), start: body.0, end: body.1)
        return try T(from: &object)
    }

    /// Goes one `step` down to the object whose tag is at `s`, and returns its body range;
    /// ``leaveObject(step:)`` comes back up, also when this throws.
    @usableFromInline func enterObject(_ type: Any.Type, _ s: Int, _ e: Int, step: PathStep?) throws -> (Int, Int) {
        depth += 1
        if let step { steps.append(step) }
        do {
            if depth > depthLimit {
                throw CompactDecodingError(.depthLimitExceeded, codingPath: pathString(path), offset: s)
            }
            return try run(type, nil) { () throws(CompactDecodingError) in
                let k = try kind(at: s, end: e)
                guard k == .object else { throw mismatch("object", k) }
                var position = s + 1
                let length = try reader.length(&position, end: e)
                return (position, position + length)
            }
        } catch {
            leaveObject(step: step)
            throw error
        }
    }

    @usableFromInline func leaveObject(step: PathStep?) {
        if step != nil { steps.removeLast() }
        depth -= 1
    }

    /// The end of array element `index`, whose tag is at `s`.
    @usableFromInline func skipElement(_ type: Any.Type, at s: Int, end: Int, index: Int) throws -> Int {
        do {
            return try reader.skip(s, end: end)
        } catch {
            throw wrap(error, type, IndexKey(index))
        }
    }

    /// How many elements the array body `start..<end` holds, counted up to the first malformed one
    /// (whose error the decoding loop then reports with its path).
    @usableFromInline func elementCount(_ start: Int, _ end: Int) -> Int {
        var count = 0
        var position = start
        while position < end, let next = try? reader.skip(position, end: end) {
            position = next
            count += 1
        }
        return count
    }

    // MARK: Decoder

    @usableFromInline func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        prepareContainers()
        return try KeyedDecodingContainer(KeyedContainerDecoder<Key>(state: self, slot: min(depth, hintBody.count - 1)))
    }

    @usableFromInline func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        prepareContainers()
        return try UnkeyedContainerDecoder(state: self)
    }

    @usableFromInline func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueDecoder(state: self, start: start, end: end)
    }

    /// The body range of the container at the current value, checking its kind.
    func containerBody(_ expected: ValueKind...) throws -> (kind: ValueKind, start: Int, end: Int) {
        try run(Any.self, nil) { () throws(CompactDecodingError) in
            let k = try kind(at: start, end: end)
            guard expected.contains(k) else { throw mismatch(expected[0] == .array ? "array" : "object", k) }
            var position = start + 1
            let length = try reader.length(&position, end: end)
            return (k, position, position + length)
        }
    }
}

/// One field of an object: its id and the range of its value.
struct FieldEntry {
    let id: Int
    let start: Int
    let end: Int
}

/// Renders a coding path like `keywords[0].rank`.
func pathString(_ path: [any CodingKey]) -> String {
    var out = ""
    for key in path {
        if key is IndexKey, let index = key.intValue {
            out += "[\(index)]"
        } else {
            if !out.isEmpty { out += "." }
            out += key.stringValue
        }
    }
    return out
}
