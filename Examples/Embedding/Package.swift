// swift-tools-version:6.2
// A program that embeds Quire, written from the README's "Embedding" section: CI builds it to
// keep that section true, and checks that `EscapeAttempt` (bytes escaping a read) and
// `LMDBAttempt` (a raw LMDB environment) do not build.
import PackageDescription

let package = Package(
    name: "Embedding",
    dependencies: [.package(name: "Quire", path: "../..")],
    targets: [
        .executableTarget(
            name: "Embedding",
            dependencies: [
                .product(name: "Quire", package: "Quire"),
                .product(name: "QuireNews", package: "Quire"),
                .product(name: "QuireHTTP", package: "Quire"),
                .product(name: "QuireFetch", package: "Quire"),
            ]),
        .executableTarget(name: "EscapeAttempt", dependencies: [.product(name: "Quire", package: "Quire")]),
        .executableTarget(name: "LMDBAttempt", dependencies: [.product(name: "Quire", package: "Quire")]),
    ],
    swiftLanguageModes: [.v6]
)
