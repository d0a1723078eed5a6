internal import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks the headers and node offsets of every page a snapshot's B-trees reach.
///
/// LMDB trusts a page's header: a damaged free-space bound (`mp_upper`) passes every read, then
/// the first write that adds a node to that page overwrites its neighbours (an intact record
/// lost), and a compacting copy walks past the page's end (a heap overrun). No read through
/// LMDB's API can see it, so the check reads the pages themselves, with `pread` from the data
/// file: a snapshot's pages do not change while its transaction is open. The layout is lmdb.h's
/// and mdb.c's on a 64-bit machine: a 16-byte page header (page number, pad, flags, lower and
/// upper bounds, or an overflow page's page count), then 2-byte node offsets; a node is 8 bytes
/// (data size or child page, flags, key size) and its key and data.
///
/// Keys are checked against their page's order and their parent's separators (a damaged
/// separator sends lookups into the wrong child: records unreachable by key, searches that
/// read another term's postings, while a walk of the leaves sees nothing), and the free list
/// against the pages the trees use (a free list naming a live page let the next write
/// overwrite committed records).
struct PageStructureCheck {
    private static let headerSize = 16
    private static let nodeHeaderSize = 8
    // Page flags (mdb.c: P_BRANCH, P_LEAF, P_OVERFLOW, P_META, P_LEAF2, P_SUBP).
    private static let branch: UInt16 = 0x01
    private static let leaf: UInt16 = 0x02
    private static let overflow: UInt16 = 0x04
    private static let leaf2: UInt16 = 0x20
    private static let subpage: UInt16 = 0x40
    // Node flags (F_BIGDATA, F_SUBDATA, F_DUPDATA).
    private static let bigData: UInt16 = 0x01
    private static let subDatabase: UInt16 = 0x02
    private static let duplicates: UInt16 = 0x04
    /// Key orders other than bytewise (`MDB_REVERSEKEY`, `MDB_INTEGERKEY`, `MDB_INTEGERDUP`,
    /// `MDB_REVERSEDUP` in a database record's flags): such trees' keys are not order-checked.
    private static let otherKeyOrder: UInt16 = 0x02 | 0x08 | 0x20 | 0x40
    /// An empty tree's root (`P_INVALID`).
    private static let noRoot = UInt64.max
    /// Deeper than any tree a file can hold: a cycle of damaged child pointers.
    private static let maximumDepth = 64

    let descriptor: Int32
    let pageSize: Int
    let lastPage: UInt64
    let limit: Int
    private(set) var problems: [String] = []
    /// Pages already reached: a page reached twice is a cycle or two parents, both damage.
    private var seen: [UInt64]
    private var page: [UInt8]
    private var pagesRead = 0
    /// While the free list is walked: the pages its records name (inline), and its records kept
    /// on overflow pages (first page, bytes), read after the walk.
    private var walkingFreeList = false
    private var freePages: [UInt64] = []
    private var freeRecordsOnOverflow: [(page: UInt64, size: Int)] = []

    /// The key range a page's keys must lie in: from `lower` (inclusive) to `upper` (exclusive);
    /// nil for a tree whose keys are not in bytewise order.
    private struct KeyRange {
        var lower: [UInt8]?
        var upper: [UInt8]?
    }

    init(descriptor: Int32, pageSize: Int, lastPage: UInt64, limit: Int) {
        self.descriptor = descriptor
        self.pageSize = pageSize
        self.lastPage = lastPage
        self.limit = limit
        seen = [UInt64](repeating: 0, count: Int(lastPage / 64) + 1)
        page = [UInt8](repeating: 0, count: pageSize)
    }

    var isFull: Bool { problems.count >= limit }

    private mutating func report(_ text: String) {
        if problems.count < limit { problems.append("page structure: " + text) }
    }

    /// Marks `number` seen; false (and a problem) when it is out of the file or seen before.
    private mutating func claim(_ number: UInt64, from parent: String) -> Bool {
        guard number >= 2, number <= lastPage else {
            report("\(parent) points to page \(number), outside the file's pages 2…\(lastPage)")
            return false
        }
        let (word, bit) = (Int(number / 64), UInt64(1) << (number % 64))
        guard seen[word] & bit == 0 else {
            report("page \(number) is reached twice (from \(parent))")
            return false
        }
        seen[word] |= bit
        return true
    }

    private mutating func read(_ number: UInt64) -> Bool {
        let offset = off_t(truncatingIfNeeded: number &* UInt64(pageSize))
        let got = page.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, pageSize, offset) }
        pagesRead += 1
        guard got == pageSize else {
            report("page \(number) cannot be read (the file ends before it)")
            return false
        }
        return true
    }

    private func u16(_ at: Int) -> Int { Int(page[at]) | Int(page[at + 1]) << 8 }
    private func u32(_ at: Int) -> UInt64 { UInt64(u16(at)) | UInt64(u16(at + 2)) << 16 }
    private func u64(_ at: Int) -> UInt64 { u32(at) | u32(at + 4) << 32 }

    /// Walks the tree rooted at `root` (a database record's or a meta page's), `name` for
    /// messages; `flags` are its database record's (its key order).
    mutating func walk(root: UInt64, name: String, flags: UInt16, isCancelled: () -> Bool) {
        guard root != Self.noRoot else { return }
        walkPage(root, parent: name, depth: 0, range: Self.range(flags), isCancelled: isCancelled)
    }

    /// Walks the free list's tree, keeping the pages its records name for ``checkFreePages()``.
    mutating func walkFreeList(root: UInt64, isCancelled: () -> Bool) {
        walkingFreeList = true
        defer { walkingFreeList = false }
        walk(root: root, name: "the free list", flags: 0x08, isCancelled: isCancelled)
    }

    private static func range(_ flags: UInt16) -> KeyRange? { flags & otherKeyOrder == 0 ? KeyRange() : nil }

    /// Whether the bytes of `a` sort before those of `b` (LMDB's default order: bytewise, a
    /// prefix first).
    private static func precedes(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        a.lexicographicallyPrecedes(b)
    }

    /// The key of the node at `at` of the page read last.
    private func key(at: Int) -> ArraySlice<UInt8> { page[(at + Self.nodeHeaderSize)..<(at + Self.nodeHeaderSize + u16(at + 6))] }

    /// After both walks: every page the free list names is in the file, named once, and used by
    /// no tree (the next write would take it and overwrite what a tree holds there).
    mutating func checkFreePages() {
        for record in freeRecordsOnOverflow where !isFull {
            // A damaged size may name gigabytes: no list of pages is larger than the file.
            guard record.size <= Int(lastPage + 1) * pageSize else {
                report("the free list's record on page \(record.page) has \(record.size) bytes, more than the file")
                continue
            }
            var bytes = [UInt8](repeating: 0, count: record.size)
            let offset = off_t(truncatingIfNeeded: record.page &* UInt64(pageSize) &+ UInt64(Self.headerSize))
            guard bytes.withUnsafeMutableBytes({ pread(descriptor, $0.baseAddress, record.size, offset) }) == record.size else {
                report("the free list's record on page \(record.page) cannot be read (the file ends before it)")
                continue
            }
            collectFreePages(bytes, 0, record.size, "the free list's record on page \(record.page)")
        }
        var named = Set<UInt64>()
        for number in freePages where !isFull {
            guard number >= 2, number <= lastPage else {
                report("the free list names page \(number), outside the file's pages 2…\(lastPage)")
                continue
            }
            guard named.insert(number).inserted else {
                report("the free list names page \(number) twice")
                continue
            }
            if seen[Int(number / 64)] & (UInt64(1) << (number % 64)) != 0 {
                report("the free list names page \(number), which a tree uses: the next write would overwrite it")
            }
        }
    }

    /// The page numbers of a free-list record (an ID list: its count, then the ids) in `bytes`.
    private mutating func collectFreePages(_ bytes: [UInt8], _ start: Int, _ size: Int, _ here: String) {
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) } }
        guard size >= 8, u64(start) == UInt64((size - 8) / 8), size % 8 == 0 else {
            return report("\(here): a free-list record of \(size) bytes that is no list of pages")
        }
        for i in 0..<(size - 8) / 8 { freePages.append(u64(start + 8 + 8 * i)) }
    }

    private mutating func walkPage(_ number: UInt64, parent: String, depth: Int, range: KeyRange?, isCancelled: () -> Bool) {
        guard !isFull, pagesRead & 1023 != 0 || !isCancelled() else { return }
        guard depth < Self.maximumDepth else {
            report("\(parent): the tree is deeper than \(Self.maximumDepth) levels (a cycle of pages)")
            return
        }
        guard claim(number, from: parent), read(number) else { return }
        let here = "page \(number)"
        guard u64(0) == number else { return report("\(here) holds page \(u64(0))'s number") }
        let flags = UInt16(u16(10))
        let kind = flags & (Self.branch | Self.leaf | Self.overflow)
        guard kind == Self.branch || kind == Self.leaf, flags & Self.subpage == 0 else {
            return report("\(here) (under \(parent)) is not a branch or leaf page (flags \(flags))")
        }
        guard let count = nodeCount(lower: u16(12), upper: u16(14), size: pageSize, here) else { return }
        if flags & Self.leaf2 != 0 { return }  // fixed-size keys, no nodes: its bounds are checked
        var children: [UInt64] = []
        var separators: [[UInt8]] = []
        var subtrees: [(root: UInt64, flags: UInt16, size: Int)] = []
        var previous: Int?
        for i in 0..<count {
            let at = u16(Self.headerSize + 2 * i)
            guard let node = node(at: at, upper: u16(14), end: pageSize, isLeaf: kind == Self.leaf, "\(here) node \(i)") else {
                return
            }
            // A branch's first key is never compared (its child holds everything below the next).
            if let range, kind == Self.leaf || i > 0 {
                let key = key(at: at)
                let inOrder = previous.map { Self.precedes(self.key(at: $0), key) } ?? true
                guard inOrder, range.lower.map({ !Self.precedes(key, $0) }) ?? true, range.upper.map({ Self.precedes(key, $0) }) ?? true else {
                    return report("\(here) (under \(parent)) node \(i): its key is out of the order of its page or of its parent's keys (a damaged key: lookups by key go astray)")
                }
                previous = at
            }
            if kind == Self.branch {
                children.append(UInt64(u16(at)) | UInt64(u16(at + 2)) << 16 | UInt64(u16(at + 4)) << 32)
                if range != nil && i > 0 { separators.append(Array(key(at: at))) }
                continue
            }
            let data = at + Self.nodeHeaderSize + node.keySize
            if walkingFreeList {
                if node.flags & Self.bigData != 0 {
                    guard data + 8 <= pageSize else { return report("\(here) node \(i): its overflow page number is past the page") }
                    freeRecordsOnOverflow.append((u64(data), node.dataSize))
                } else {
                    collectFreePages(page, data, node.dataSize, "\(here) node \(i)")
                }
            }
            if node.flags & Self.bigData != 0 {
                guard data + 8 <= pageSize else { return report("\(here) node \(i): its overflow page number is past the page") }
                subtrees.append((u64(data) | 1 << 63, 0, node.dataSize))  // marked: an overflow run, checked below
                continue
            }
            if node.flags & Self.subDatabase != 0 {
                // A named database's or a key's duplicates' record: its root is its last word.
                guard node.dataSize == 48 else { return report("\(here) node \(i): a database record of \(node.dataSize) bytes, not 48") }
                let root = u64(data + 40)
                if root != Self.noRoot { subtrees.append((root, UInt16(u16(data + 4)), 0)) }
            } else if node.flags & Self.duplicates != 0 {
                guard checkSubpage(at: data, size: node.dataSize, "\(here) node \(i)") else { return }
            }
        }
        // Children after the page's own checks: `page` is reused by each read.
        for (i, child) in children.enumerated() {
            // Child i holds the keys from its separator to the next one.
            let childRange = range.map { range in
                KeyRange(lower: i == 0 ? range.lower : separators[i - 1], upper: i < separators.count ? separators[i] : range.upper)
            }
            walkPage(child, parent: here, depth: depth + 1, range: childRange, isCancelled: isCancelled)
        }
        for tree in subtrees {
            if tree.root >> 63 == 1 { checkOverflow(tree.root & ~(1 << 63), parent: here, size: tree.size) } else {
                walkPage(tree.root, parent: here, depth: depth + 1, range: Self.range(tree.flags), isCancelled: isCancelled)
            }
        }
    }

    /// The number of nodes the bounds give, when they are a page's: the offsets after the
    /// header, the free space between them and the nodes, within the page.
    private mutating func nodeCount(lower: Int, upper: Int, size: Int, _ here: String) -> Int? {
        guard lower >= Self.headerSize, (lower - Self.headerSize) % 2 == 0, lower <= upper, upper <= size else {
            report("\(here): its bounds (lower \(lower), upper \(upper)) are not a page of \(size) bytes")
            return nil
        }
        return (lower - Self.headerSize) / 2
    }

    private struct Node {
        let flags: UInt16
        let keySize: Int
        let dataSize: Int
    }

    /// The node at `at`, when it and its key (and, in a leaf, its data unless on overflow pages)
    /// lie between the page's free space and `end`.
    private mutating func node(at: Int, upper: Int, end: Int, isLeaf: Bool, _ here: String) -> Node? {
        guard at >= upper, at % 2 == 0, at + Self.nodeHeaderSize <= end else {
            report("\(here): its offset \(at) is outside the page's nodes (\(upper)…\(end))")
            return nil
        }
        let flags = UInt16(u16(at + 4))
        let keySize = u16(at + 6)
        let dataSize = isLeaf ? u16(at) | u16(at + 2) << 16 : 0
        let inPage = isLeaf && flags & Self.bigData == 0 ? dataSize : 0
        guard at + Self.nodeHeaderSize + keySize + inPage <= end else {
            report("\(here): its key and data (\(keySize) + \(inPage) bytes) run past the page")
            return nil
        }
        return Node(flags: flags, keySize: keySize, dataSize: dataSize)
    }

    /// A key's duplicates kept inside its node: a small page of their own.
    private mutating func checkSubpage(at start: Int, size: Int, _ here: String) -> Bool {
        guard size >= Self.headerSize, u16(start + 10) & Int(Self.subpage) != 0 else {
            report("\(here): its duplicates are not a page (\(size) bytes)")
            return false
        }
        let upper = u16(start + 14)
        guard let count = nodeCount(lower: u16(start + 12), upper: upper, size: size, here + "'s duplicates") else { return false }
        if u16(start + 10) & Int(Self.leaf2) != 0 { return true }
        for i in 0..<count {
            let at = u16(start + Self.headerSize + 2 * i)
            // Offsets are from the subpage's start; its nodes hold keys only.
            guard at >= upper, at + Self.nodeHeaderSize <= size, at + Self.nodeHeaderSize + u16(start + at + 6) <= size else {
                report("\(here)'s duplicate \(i) lies outside its page")
                return false
            }
        }
        return true
    }

    /// The run of overflow pages at `number` holding a value of `size` bytes.
    private mutating func checkOverflow(_ number: UInt64, parent: String, size: Int) {
        guard claim(number, from: parent), read(number) else { return }
        let pages = u32(12)
        guard u64(0) == number, UInt16(u16(10)) & Self.overflow != 0, pages >= 1, number + pages - 1 <= lastPage else {
            return report("page \(number) (a value of \(parent)) is not an overflow run within the file")
        }
        // LMDB's OVPAGES: the header and the value, in whole pages (a run reused for a smaller
        // value may be longer). A shorter run's value reads into pages the run does not own.
        let needed = UInt64((Self.headerSize - 1 + size) / pageSize + 1)
        guard pages >= needed else {
            return report("page \(number) (a value of \(parent)) is a run of \(pages) pages for a value of \(size) bytes, which needs \(needed)")
        }
        for extra in 1..<pages { _ = claim(number + extra, from: "page \(number)'s run") }
    }

    /// The problems of the snapshot of `txn`: its meta page's two trees (the free list and the
    /// main database) and every named database's, with their duplicates' trees and values'
    /// overflow runs. At most `limit`; stops early when `isCancelled` says so.
    static func problems(
        _ txn: TransactionHandle, limit: Int, isCancelled: () -> Bool
    ) throws(LMDBError) -> [String] {
        let environment = txn.environment
        var descriptor: Int32 = -1
        var stat = MDB_stat()
        try txn.check(mdb_env_get_fd(environment.handle, &descriptor), "mdb_env_get_fd")
        try txn.check(mdb_env_stat(environment.handle, &stat), "mdb_env_stat")
        let pageSize = Int(stat.ms_psize)
        // The meta page of this snapshot: the one of its transaction id.
        let id = UInt64(mdb_txn_id(txn.txn))
        for number in 0..<2 {
            guard let meta = DataFileCheck.readMeta(fd: descriptor, at: number * pageSize), meta.transactionID == id else { continue }
            var check = PageStructureCheck(descriptor: descriptor, pageSize: pageSize, lastPage: meta.lastPage, limit: limit)
            check.walkFreeList(root: meta.freeRoot, isCancelled: isCancelled)
            check.walk(root: meta.mainRoot, name: "the main database", flags: meta.mainFlags, isCancelled: isCancelled)
            if !isCancelled() { check.checkFreePages() }
            return check.problems
        }
        return ["page structure: no meta page holds this snapshot's transaction \(id)"]
    }
}

extension ReadableTransaction where Self: ~Copyable {
    /// Damaged page headers and node offsets in this snapshot's trees (``PageStructureCheck``),
    /// at most `limit`: what LMDB's reads never notice and its writes and compacting copies
    /// trust. Reads every page of the trees once.
    package func pageStructureProblems(limit: Int = 20, isCancelled: () -> Bool = { false }) throws(LMDBError) -> [String] {
        raw.checkLive()
        return try PageStructureCheck.problems(raw, limit: limit, isCancelled: isCancelled)
    }
}
