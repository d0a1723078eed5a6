// libFuzzer harness: NYT Article Search pages and Feedzilla bodies through QuireNews's mapping.
// Built by scripts/fuzz.sh together with the fixture generator (not a SwiftPM target). Every input
// must map fully or throw NewsMappingError; a trap, an ASan report or a timeout is a finding.
import Foundation
import QuireNews

/// Writes generated bodies of every era into `$QUIRE_FUZZ_SEED_DIR`.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    guard let dir = ProcessInfo.processInfo.environment["QUIRE_FUZZ_SEED_DIR"] else { return 0 }
    var generator = ArticleGenerator(seed: 4242)
    var seeds: [[UInt8]] = []
    for era in NYTEra.allCases {
        seeds.append(nytPageBody(articles: generator.articles(count: 2), hits: 12, page: 1, era: era))
        seeds.append(nytPageBody(articles: [], hits: 0, page: 0, era: era))
    }
    seeds.append(feedzillaArticleListBody(categoryID: 26, articles: generator.articles(count: 2), requestQuery: "count=2"))
    seeds.append(feedzillaCategoriesBody((0..<3).map { generator.category(index: $0) }))
    for body in NYTErrorBody.allCases.map(\.body) { seeds.append(body) }
    for (i, seed) in seeds.enumerated() {
        _ = FileManager.default.createFile(atPath: "\(dir)/seed-nyt-\(i)", contents: Data(seed))
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let page = try? NYTArticleSearch.parsePage(bytes) {
        precondition(page.articles.count == page.rawDocuments.count, "raw documents and articles differ")
        for (raw, article) in zip(page.rawDocuments, page.articles) {
            precondition((try? NYTArticleSearch.articleMapping.decode(raw)) == article, "a raw document maps differently")
        }
    }
    if let (list, articles) = try? Feedzilla.parseArticleList(bytes, categoryID: 26) {
        precondition(list.articleIDs == articles.map(\.id), "list ids differ from its articles")
    }
    _ = try? Feedzilla.parseCategories(bytes)
    return 0
}
