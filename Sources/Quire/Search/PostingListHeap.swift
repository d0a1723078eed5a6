/// The posting lists of a prefix's expansions ordered by their current document (a binary
/// min-heap of their indexes), so that a phrase ending in a prefix finds the expansions that hold
/// a candidate in about log(expansions) steps a posting, instead of asking every expansion for
/// every candidate: `"the st*"` has thousands of expansions, and took seconds at 90k articles.
struct PostingListHeap {
    private var heap = IndexHeap()

    /// The lists of `lists` positioned on their first document.
    init(_ lists: inout [TermPostings]) throws {
        for i in lists.indices where try lists[i].next() != nil { heap.push(i, lists, by: Self.precedes) }
    }

    /// Calls `body` with each list that holds `target`, after moving every list below it up to
    /// it. Targets must ascend.
    mutating func forEachList(
        holding target: UInt32, in lists: inout [TermPostings], _ body: (inout TermPostings) throws -> Void
    ) throws {
        while let top = heap.first, let document = lists[top].document, document < target {
            if try lists[top].advance(to: target) == nil {
                heap.removeFirst(lists, by: Self.precedes)
            } else {
                heap.firstMoved(lists, by: Self.precedes)
            }
        }
        var holding: [Int] = []
        while let top = heap.first, lists[top].document == target {
            holding.append(top)
            heap.removeFirst(lists, by: Self.precedes)
        }
        for i in holding {
            try body(&lists[i])
            heap.push(i, lists, by: Self.precedes)
        }
    }

    private static func precedes(_ lists: [TermPostings], _ a: Int, _ b: Int) -> Bool {
        (lists[a].document ?? .max) < (lists[b].document ?? .max)
    }
}
