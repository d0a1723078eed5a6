/// The generated data every case of one run shares, so all comparisons see the same records.
final class Corpus {
    let articles: [BenchArticle]
    /// Each article's id as UTF-8 key bytes, in generation (random) order.
    let keys: [[UInt8]]
    /// Each article hand-encoded: the bytes the raw LMDB baselines put.
    let values: [[UInt8]]
    /// Indices of `articles` in ascending key order.
    let sortedOrder: [Int]

    init(count: Int) {
        articles = BenchArticleGenerator.make(count: count)
        let keys = articles.map { Array($0.id.utf8) }
        self.keys = keys
        values = articles.map(HandCodec.encode)
        sortedOrder = keys.indices.sorted { keys[$0].lexicographicallyPrecedes(keys[$1]) }
    }

    var count: Int { articles.count }

    /// Mean size of the pre-encoded values.
    var meanValueBytes: Double {
        Double(values.reduce(0) { $0 + $1.count }) / Double(max(1, values.count))
    }
}
