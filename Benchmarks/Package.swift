// swift-tools-version: 6.1
// The library benchmark of skipbackup: `isExcludedFromBackup` on one path
// against the raw getxattr(2) call it wraps. Kept out of the main package so
// that `swift test` and CI never build it; scripts/benchmark runs it.
import PackageDescription

let package = Package(
  name: "SkipBackupBenchmarks",
  platforms: [.macOS(.v13)],
  dependencies: [
    .package(name: "skipbackup", path: ".."),
    .package(
      url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
  ],
  targets: [
    .executableTarget(
      name: "IsExcluded",
      dependencies: [
        .product(name: "Benchmark", package: "benchmark"),
        .product(name: "SkipBackup", package: "skipbackup"),
        .product(name: "CXattr", package: "skipbackup"),
      ],
      path: "Benchmarks/IsExcluded",
      plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
  ]
)
