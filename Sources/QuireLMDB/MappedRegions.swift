internal import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the open environments' maps lie, for a fault handler to tell a damaged page LMDB
/// followed (a fault in or just past a map) from anything else (memory that ran out, a bug),
/// which is no reason to doubt the store.
///
/// Read from a signal handler: plain loads of a fixed buffer, no locks, no allocation. A slot
/// being rewritten while a fault is reported can give the wrong one of the two messages, never
/// a crash. Written under a lock by opens, remaps and closes.
package enum MappedRegions {
    /// Environments followed at once. While more are open, every address counts as a store's
    /// (the message of old), since the one that faulted may be among those left out.
    private static let capacity = 128
    /// `[start, end)` of each slot's map, 0 when free.
    nonisolated(unsafe) private static let bounds: UnsafeMutablePointer<UInt> = {
        let pointer = UnsafeMutablePointer<UInt>.allocate(capacity: 2 * capacity)
        pointer.initialize(repeating: 0, count: 2 * capacity)
        return pointer
    }()
    private static let lock = ThreadLock()
    nonisolated(unsafe) private static var used = Set<Int>()
    /// How many open environments got no slot; read by the signal handler like `bounds`.
    nonisolated(unsafe) private static var untracked = 0

    /// How far past a map's end a fault still counts as the map's: a damaged length makes LMDB
    /// copy past the end of the last pages.
    private static let margin: UInt = 64 << 20

    /// Whether `address` lies in an open environment's map or within the margin past its end.
    /// Async-signal-safe.
    package static func contains(_ address: UInt) -> Bool {
        if !enabled || untracked > 0 { return true }
        for slot in 0..<capacity {
            let start = bounds[2 * slot]
            let end = bounds[2 * slot + 1]
            // Saturating: the fallback span (1…UInt.max, maps not readable) must not wrap.
            let limit = end > UInt.max - margin ? UInt.max : end + margin
            if start != 0 && address >= start && address < limit { return true }
        }
        return false
    }

    /// Whether maps are followed: only for a process with a fault handler that asks (the CLI),
    /// since each open and remap then reads `/proc/self/maps`. Until then every address counts
    /// as a store's.
    nonisolated(unsafe) private static var enabled = false

    /// Starts following the maps of environments opened from now on, and touches the buffer so
    /// that its first use is not in a signal handler. Call it before opening any store.
    package static func enable() {
        _ = bounds
        locateLMDBCode()
        lock.withLock { enabled = true }
    }

    /// Stops following the maps of environments opened from now on (a test's).
    static func disable() {
        lock.withLock { enabled = false }
    }

    /// A slot for a new environment: nil when maps are not followed, ``untrackedSlot`` when all
    /// are taken (counted until it is released).
    static func claim() -> Int? {
        lock.withLock {
            guard enabled else { return nil }
            guard let free = (0..<capacity).first(where: { !used.contains($0) }) else {
                untracked += 1
                return untrackedSlot
            }
            used.insert(free)
            return free
        }
    }

    /// The slot of an environment opened while every slot was taken.
    static let untrackedSlot = -1

    /// Records the map of `handle` in `slot` (none when the environment has no map). LMDB does
    /// not tell its map's address (`me_mapaddr` is only set for fixed maps): it is the mapping
    /// of the data file's inode in `/proc/self/maps`. Where that cannot be read, every address
    /// counts as the store's (the damaged-store message, as before).
    static func update(_ slot: Int?, handle: OpaquePointer, mapped: Bool) {
        guard let slot, slot >= 0 else { return }
        var range: (start: UInt, end: UInt) = (0, 0)
        var descriptor: Int32 = -1
        var info = stat()
        if mapped, mdb_env_get_fd(handle, &descriptor) == 0, fstat(descriptor, &info) == 0 {
            range = mapping(ofInode: UInt64(info.st_ino)) ?? (1, UInt.max)
        }
        lock.withLock {
            bounds[2 * slot] = 0
            bounds[2 * slot + 1] = range.end
            bounds[2 * slot] = range.start
        }
    }

    /// The span of this process's mappings of a file named `data.mdb` with inode `inode`.
    private static func mapping(ofInode inode: UInt64) -> (start: UInt, end: UInt)? {
        span(of: processMappings().filter { $0.inode == inode && $0.path.hasSuffix("/data.mdb") })
    }

    /// The smallest range holding every one of `mappings`; nil for none.
    private static func span(of mappings: [ProcessMapping]) -> (start: UInt, end: UInt)? {
        guard let start = mappings.map(\.start).min(), let end = mappings.map(\.end).max() else { return nil }
        return (start, end)
    }

    /// One line of `/proc/self/maps`.
    private struct ProcessMapping {
        var start: UInt
        var end: UInt
        var executable: Bool
        var inode: UInt64
        var path: String
    }

    /// This process's mappings (none where `/proc/self/maps` cannot be read).
    private static func processMappings() -> [ProcessMapping] {
        let descriptor = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return [] }
        defer { close(descriptor) }
        var text: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            text += chunk[0..<count]
        }
        var mappings: [ProcessMapping] = []
        // "start-end perms offset dev inode path"
        for line in text.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
            guard fields.count >= 6, let inode = UInt64(String(decoding: fields[4], as: UTF8.self)) else { continue }
            let bounds = fields[0].split(separator: UInt8(ascii: "-"))
            guard bounds.count == 2, let start = UInt(String(decoding: bounds[0], as: UTF8.self), radix: 16),
                let end = UInt(String(decoding: bounds[1], as: UTF8.self), radix: 16)
            else { continue }
            mappings.append(
                ProcessMapping(
                    start: start, end: end, executable: fields[1].contains(UInt8(ascii: "x")), inode: inode,
                    path: String(decoding: fields[5], as: UTF8.self)))
        }
        return mappings
    }

    /// `[start, end)` of LMDB's machine code, 0 when not found; read by the signal handler.
    nonisolated(unsafe) private static var lmdbCode: (start: UInt, end: UInt) = (0, 0)

    /// Whether `instruction` (a faulting instruction's address) is LMDB's own code: LMDB
    /// faulting near null is LMDB following a pointer it read from a damaged page. Unknown
    /// (false) before ``enable()``. Async-signal-safe.
    package static func isLMDBCode(_ instruction: UInt) -> Bool {
        instruction >= lmdbCode.start && instruction < lmdbCode.end
    }

    /// Finds LMDB's code among the process's mappings (the shared library's executable pages).
    private static func locateLMDBCode() {
        let code = processMappings().filter { mapping in
            mapping.executable && (mapping.path.split(separator: "/").last ?? "").hasPrefix("liblmdb")
        }
        lmdbCode = span(of: code) ?? (0, 0)
    }

    /// Frees `slot` (the environment closed).
    static func release(_ slot: Int?) {
        guard let slot else { return }
        lock.withLock {
            guard slot >= 0 else {
                untracked -= 1
                return
            }
            bounds[2 * slot] = 0
            bounds[2 * slot + 1] = 0
            used.remove(slot)
        }
    }
}
