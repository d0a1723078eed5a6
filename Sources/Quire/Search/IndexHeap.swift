/// A binary min-heap of indexes into a caller's array, in the order `precedes` gives them from
/// that array: the sources of a segment merge by their current term (``TermBlockMerger``), a
/// prefix's expansions by their current document (``PostingListHeap``). The array stays the
/// caller's (it changes between calls: the heap is told when its first element moved).
struct IndexHeap {
    private(set) var indexes: [Int] = []

    /// The index that comes first, nil when empty.
    var first: Int? { indexes.first }

    mutating func push<T>(_ index: Int, _ items: [T], by precedes: ([T], Int, Int) -> Bool) {
        indexes.append(index)
        var i = indexes.count - 1
        while i > 0, precedes(items, indexes[i], indexes[(i - 1) / 2]) {
            indexes.swapAt(i, (i - 1) / 2)
            i = (i - 1) / 2
        }
    }

    /// Takes the first index out.
    mutating func removeFirst<T>(_ items: [T], by precedes: ([T], Int, Int) -> Bool) {
        indexes.swapAt(0, indexes.count - 1)
        indexes.removeLast()
        if !indexes.isEmpty { firstMoved(items, by: precedes) }
    }

    /// Puts the first index back in its place after its item moved on.
    mutating func firstMoved<T>(_ items: [T], by precedes: ([T], Int, Int) -> Bool) {
        var i = 0
        while true {
            // The two children by hand: an array literal of them cost an allocation a step.
            let left = 2 * i + 1
            var smallest = i
            if left < indexes.count && precedes(items, indexes[left], indexes[smallest]) { smallest = left }
            if left + 1 < indexes.count && precedes(items, indexes[left + 1], indexes[smallest]) { smallest = left + 1 }
            guard smallest != i else { return }
            indexes.swapAt(i, smallest)
            i = smallest
        }
    }
}
