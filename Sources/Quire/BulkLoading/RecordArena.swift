#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes of one key or record in a ``RecordArena``, valid while the arena lives.
struct ArenaBytes: @unchecked Sendable {
    // @unchecked: points into memory that is written once, before the bytes are handed out,
    // and only read afterwards; whoever holds these also holds the arena.
    let start: UnsafeRawPointer
    let count: Int

    var buffer: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: start, count: count) }
    var array: [UInt8] { Array(buffer) }
}

/// Memory for a bulk load's encoded keys and records, laid end to end in large blocks.
///
/// A load keeps its records until they commit (a whole sort window of them when keys arrive out
/// of order). One heap array per record put each one in fresh memory, and faulting those pages
/// in cost about as much as encoding the records; the arrays' reference counts cost a cache
/// miss each time a record changed hands. Blocks here come from `mmap`, the bigger ones with
/// transparent huge pages requested (one page fault per 2 MiB where the kernel allows it), and
/// go back to the system at once when the arena is freed.
final class RecordArena: @unchecked Sendable {
    // @unchecked: appended to by one thread while a chunk encodes; after that only read.
    private var blocks: [(start: UnsafeMutableRawPointer, size: Int)] = []
    private var next: UnsafeMutableRawPointer?
    private var remaining = 0
    private var nextBlockSize: Int
    /// Bytes appended so far.
    private(set) var byteCount = 0

    static let hugePage = 2 << 20
    static let largestBlock = 32 << 20

    /// `firstBlock` is rounded up to whole huge pages (at most 32 MiB); each new block doubles, up
    /// to 32 MiB, or fits the bytes appended when they are bigger.
    init(firstBlock: Int = 2 << 20) {
        nextBlockSize = min(Self.largestBlock, Self.roundedToHugePages(max(1, firstBlock)))
    }

    /// The first `size` bytes of the open file `descriptor`, mapped read-only as the arena's one
    /// block (a load's spilled sorted runs, ``SpillFile``); nothing can be appended to it. File
    /// pages, not anonymous memory: the kernel reads them in and drops them as it needs.
    init(mappingFile descriptor: Int32, size: Int) throws {
        nextBlockSize = Self.hugePage
        guard size > 0 else { return }
        guard let start = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), start != MAP_FAILED else {
            throw StoreError(.storage, "cannot map \(size) bytes of a bulk load's sorted runs: \(String(cString: strerror(errno)))")
        }
        #if os(Linux)
        _ = madvise(start, size, MADV_SEQUENTIAL)  // each run is read front to back, once
        #endif
        blocks.append((start, size))
        byteCount = size
    }

    /// Unmaps the pages of the first block that lie wholly in `range` (offsets into it) from
    /// this process: a mapped file's pages are read in again if touched, so nothing that still
    /// points there breaks; it only lets the kernel drop them.
    func releasePages(_ range: Range<Int>) {
        guard let block = blocks.first else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = (range.lowerBound + page - 1) / page * page
        let end = min(block.size, range.upperBound / page * page)
        guard end > start else { return }
        _ = madvise(block.start + start, end - start, MADV_DONTNEED)
    }

    /// The start of the first block (a mapped file's bytes).
    var firstBlockStart: UnsafeRawPointer? { blocks.first.map { UnsafeRawPointer($0.start) } }

    deinit {
        for block in blocks { munmap(block.start, block.size) }
    }

    /// Copies `bytes` into the arena.
    /// - Throws: `StoreError` when the system has no memory for a new block.
    func append(_ bytes: UnsafeRawBufferPointer) throws -> ArenaBytes {
        if bytes.count > remaining || next == nil { try addBlock(atLeast: bytes.count) }
        let start = next!
        if let source = bytes.baseAddress, bytes.count > 0 { start.copyMemory(from: source, byteCount: bytes.count) }
        next = start + bytes.count
        remaining -= bytes.count
        byteCount += bytes.count
        return ArenaBytes(start: UnsafeRawPointer(start), count: bytes.count)
    }

    /// Copies `bytes` into the arena.
    func append(_ bytes: [UInt8]) throws -> ArenaBytes {
        try bytes.withUnsafeBytes { try append($0) }
    }

    /// Gives the unused end of the last block back to the system; later appends start a new
    /// block. A slice's first block is sized from a guess, and where huge pages are granted a
    /// touched 2 MiB page is resident whole: a held sort window of small slices kept about twice
    /// its bytes before trimming.
    func trim() {
        guard let next, let last = blocks.last else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let used = (next - last.start + page - 1) / page * page
        if used < last.size {
            munmap(last.start + used, last.size - used)
            blocks[blocks.count - 1].size = used
        }
        self.next = nil
        remaining = 0
    }

    private func addBlock(atLeast count: Int) throws {
        let size = max(nextBlockSize, Self.roundedToHugePages(max(1, count)))
        nextBlockSize = min(Self.largestBlock, nextBlockSize * 2)
        guard let start = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            start != MAP_FAILED
        else {
            throw StoreError(.storage, "out of memory: cannot map \(size) bytes for a bulk load's encoded records")
        }
        #if os(Linux)
        // Only a hint: where the kernel offers no huge pages, the block is ordinary memory.
        if size > Self.hugePage { _ = madvise(start, size, MADV_HUGEPAGE) }
        #endif
        blocks.append((start, size))
        next = start
        remaining = size
    }

    private static func roundedToHugePages(_ count: Int) -> Int {
        (count + hugePage - 1) / hugePage * hugePage
    }
}
