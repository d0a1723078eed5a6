import Foundation

/// The bytes of one commit in the `_changes` database (docs/FORMAT.md, "Change feed"):
/// `varint committedAt (ms since 1970)`, `varint change count`, then per change a kind byte
/// (0 upsert, 1 delete, 2 relation), the collection name (`varint length` + UTF-8), `varint key
/// count` and each key (`varint length` + bytes).
enum ChangeFeedRecord {
    static func encode(_ changes: [StoreChange], at date: Date) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16 + changes.reduce(0) { $0 + $1.collection.utf8.count + $1.keys.count * 24 })
        writeVarint(UInt64(max(0, (date.timeIntervalSince1970 * 1000).rounded(.down))), &out)
        writeVarint(UInt64(changes.count), &out)
        for change in changes {
            out.append(kindByte(change.kind))
            let name = Array(change.collection.utf8)
            writeVarint(UInt64(name.count), &out)
            out += name
            writeVarint(UInt64(change.keys.count), &out)
            for key in change.keys {
                writeVarint(UInt64(key.bytes.count), &out)
                out += key.bytes
            }
        }
        return out
    }

    /// Decodes a record; nil for bytes this version cannot read (a damaged entry).
    static func decode(_ bytes: UnsafeRawBufferPointer) -> (committedAt: Date, changes: [StoreChange])? {
        var position = 0
        func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while position < bytes.count, shift < 64 {
                let byte = bytes[position]
                position += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }
        func take(_ count: UInt64) -> [UInt8]? {
            guard count <= UInt64(bytes.count - position) else { return nil }
            defer { position += Int(count) }
            return Array(bytes[position..<(position + Int(count))])
        }
        guard let millis = varint(), let count = varint(), count <= UInt64(bytes.count) else { return nil }
        var changes: [StoreChange] = []
        for _ in 0..<count {
            guard position < bytes.count, let kind = kind(bytes[position]) else { return nil }
            position += 1
            guard let length = varint(), let nameBytes = take(length),
                let name = String(validating: nameBytes, as: UTF8.self), let keyCount = varint(),
                keyCount <= UInt64(bytes.count)
            else { return nil }
            var keys: [StoreKey] = []
            keys.reserveCapacity(Int(keyCount))
            for _ in 0..<keyCount {
                guard let keyLength = varint(), let key = take(keyLength) else { return nil }
                keys.append(StoreKey(bytes: key))
            }
            changes.append(StoreChange(collection: name, kind: kind, keys: keys))
        }
        guard position == bytes.count else { return nil }
        return (Date(timeIntervalSince1970: Double(millis) / 1000), changes)
    }

    static func sequenceKey(_ sequence: UInt64) -> [UInt8] {
        withUnsafeBytes(of: sequence.bigEndian) { Array($0) }
    }

    /// The sequence a key holds; nil for a key of another length or past `Int64.max`: sequences
    /// count commits from 1, and such a key is damage (one flipped bit) that `watch` and the API
    /// could not even print as a number.
    static func sequence(of key: UnsafeRawBufferPointer) -> UInt64? {
        guard let value = storedSequence(of: key), value <= UInt64(Int64.max) else { return nil }
        return value
    }

    /// The key's number as stored, whatever it is (the writer numbers the next commit after it).
    static func storedSequence(of key: UnsafeRawBufferPointer) -> UInt64? {
        guard key.count == 8 else { return nil }
        return key.reduce(0) { $0 << 8 | UInt64($1) }
    }

    private static func kindByte(_ kind: StoreChange.Kind) -> UInt8 {
        switch kind {
        case .upsert: 0
        case .delete: 1
        case .relation: 2
        }
    }

    private static func kind(_ byte: UInt8) -> StoreChange.Kind? {
        switch byte {
        case 0: .upsert
        case 1: .delete
        case 2: .relation
        default: nil
        }
    }

    private static func writeVarint(_ value: UInt64, _ out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }
}
