// swift-tools-version:6.0
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Quire",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Quire", targets: ["Quire"]),
        .library(name: "QuireCodec", targets: ["QuireCodec"]),
        .library(name: "QuireNews", targets: ["QuireNews"]),
        .library(name: "QuireHTTP", targets: ["QuireHTTP"]),
        .library(name: "QuireFetch", targets: ["QuireFetch"]),
        .library(name: "QuireFixtures", targets: ["QuireFixtures"]),
        .library(name: "QuireText", targets: ["QuireText"]),
        .library(name: "QuireServe", targets: ["QuireServe"]),
        .library(name: "QuireCluster", targets: ["QuireCluster"]),
        .executable(name: "quire", targets: ["quire"]),
        .executable(name: "quire-bench", targets: ["quire-bench"]),
    ],
    targets: [
        // C libraries from Debian (see .ci/run for the apt packages).
        .systemLibrary(name: "CLMDB", path: "CLMDB", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // Header only: the processor's CRC-32C instruction for record checksums.
        .systemLibrary(name: "CChecksum"),
        // Header only: a cache prefetch hint for the term table's bulk lookups.
        .systemLibrary(name: "CPrefetch"),
        // Header only: glibc's malloc_trim, to hand freed buffers back between a load's phases.
        .systemLibrary(name: "CMalloc"),

        // Thread-local depths (C11 _Thread_local), so a read inside a read of the same store never waits for itself.
        .target(name: "CThreadDepth"),

        // The library, bottom up (DESIGN.md "Architecture").
        .target(name: "QuireLMDB", dependencies: ["CLMDB", "CThreadDepth"], swiftSettings: strict),
        .target(name: "QuireCodec", dependencies: ["CZstd", "CChecksum"], swiftSettings: strict),
        .target(name: "QuireText", dependencies: ["CPrefetch"], swiftSettings: strict),
        .target(name: "Quire", dependencies: ["QuireLMDB", "QuireCodec", "QuireText", "CMalloc"], swiftSettings: strict),
        .target(name: "QuireNews", dependencies: ["QuireCodec"], swiftSettings: strict),
        .target(name: "QuireHTTP", dependencies: ["CCurl"], swiftSettings: strict),
        .target(
            name: "QuireFetch", dependencies: ["Quire", "QuireNews", "QuireHTTP"], swiftSettings: strict),
        .target(name: "QuireFixtures", dependencies: ["QuireNews"], swiftSettings: strict),
        .target(name: "QuireServe", dependencies: ["Quire", "QuireNews", "CMicroHTTPD", "CZlib", "CMalloc"], swiftSettings: strict),
        .target(
            name: "QuireCluster",
            dependencies: ["Quire", "QuireLMDB", "QuireCodec", "QuireNews", "QuireHTTP", "QuireFetch", "QuireServe", "CZstd"],
            swiftSettings: strict),

        // Executables.
        .executableTarget(
            name: "quire",
            dependencies: [
                "Quire", "QuireLMDB", "QuireCodec", "QuireNews", "QuireText", "QuireHTTP", "QuireFetch", "QuireFixtures",
                "QuireServe", "QuireCluster", "CMalloc",
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "quire-bench",
            dependencies: [
                "Quire", "QuireLMDB", "QuireCodec", "QuireNews", "QuireText", "QuireHTTP", "QuireFetch", "QuireFixtures",
                "QuireServe", "QuireCluster", "CLMDB", "CSQLite", "CMalloc",
            ],
            path: "Benchmarks", exclude: ["README.md", "latest.svg", "scale.svg"], swiftSettings: strict),

        // Tests (Swift Testing), and what they share.
        .target(name: "QuireTestSupport", path: "Tests/QuireTestSupport", swiftSettings: strict),
        .testTarget(name: "QuireLMDBTests", dependencies: ["QuireLMDB", "QuireTestSupport"], swiftSettings: strict),
        .testTarget(name: "QuireCodecTests", dependencies: ["QuireCodec", "CZstd"], swiftSettings: strict),
        .testTarget(
            name: "QuireTextTests", dependencies: ["QuireText", "QuireFixtures", "QuireNews", "CSQLite", "Quire", "QuireTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "QuireNewsTests", dependencies: ["QuireNews", "QuireFixtures", "QuireCodec"], swiftSettings: strict),
        .testTarget(name: "QuireTests", dependencies: ["Quire", "QuireLMDB", "QuireNews", "QuireFixtures", "QuireTestSupport"], swiftSettings: strict),
        .testTarget(name: "QuireHTTPTests", dependencies: ["QuireHTTP", "QuireFixtures"], swiftSettings: strict),
        .testTarget(
            name: "QuireFetchTests", dependencies: ["QuireFetch", "Quire", "QuireNews", "QuireFixtures", "QuireHTTP", "QuireTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "QuireServeTests", dependencies: ["QuireServe", "Quire", "QuireNews", "QuireFetch"],
            swiftSettings: strict),
        .testTarget(
            name: "QuireClusterTests",
            dependencies: ["QuireCluster", "Quire", "QuireFetch", "QuireFixtures", "QuireHTTP", "QuireNews", "QuireTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "CLITests",
            dependencies: ["quire", "Quire", "QuireLMDB", "QuireCodec", "QuireNews", "QuireFetch", "QuireFixtures", "QuireTestSupport"],
            swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
