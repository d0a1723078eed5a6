/// The posting lists of a prefix's expansions ordered by their current document (a binary
/// min-heap of their indexes), so that a phrase ending in a prefix finds the expansions that hold
/// a candidate in about log(expansions) steps a posting, instead of asking every expansion for
/// every candidate: `"the st*"` has thousands of expansions, and took seconds at 90k articles.
struct PostingListHeap {
    private var heap: [Int] = []

    /// The lists of `lists` positioned on their first document.
    init(_ lists: inout [TermPostings]) throws {
        for i in lists.indices where try lists[i].next() != nil { push(i, lists) }
    }

    /// Calls `body` with each list that holds `target`, after moving every list below it up to
    /// it. Targets must ascend.
    mutating func forEachList(
        holding target: UInt32, in lists: inout [TermPostings], _ body: (inout TermPostings) throws -> Void
    ) throws {
        while let top = heap.first, let document = lists[top].document, document < target {
            if try lists[top].advance(to: target) == nil { popTop(lists) } else { siftDown(lists) }
        }
        var holding: [Int] = []
        while let top = heap.first, lists[top].document == target {
            holding.append(top)
            popTop(lists)
        }
        for i in holding {
            try body(&lists[i])
            push(i, lists)
        }
    }

    private func precedes(_ a: Int, _ b: Int, _ lists: [TermPostings]) -> Bool {
        (lists[a].document ?? .max) < (lists[b].document ?? .max)
    }

    private mutating func push(_ list: Int, _ lists: [TermPostings]) {
        heap.append(list)
        var i = heap.count - 1
        while i > 0, precedes(heap[i], heap[(i - 1) / 2], lists) {
            heap.swapAt(i, (i - 1) / 2)
            i = (i - 1) / 2
        }
    }

    private mutating func popTop(_ lists: [TermPostings]) {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        if !heap.isEmpty { siftDown(lists) }
    }

    private mutating func siftDown(_ lists: [TermPostings]) {
        var i = 0
        while true {
            let left = 2 * i + 1
            var smallest = i
            if left < heap.count && precedes(heap[left], heap[smallest], lists) { smallest = left }
            if left + 1 < heap.count && precedes(heap[left + 1], heap[smallest], lists) { smallest = left + 1 }
            guard smallest != i else { return }
            heap.swapAt(i, smallest)
            i = smallest
        }
    }
}
