// swift-tools-version: 6.1
// An outside package that depends on skipbackup by path, as a user's would:
// scripts/test builds and runs it, and checks the bytes with getfattr.
import PackageDescription

let package = Package(
  name: "Consumer",
  dependencies: [.package(name: "skipbackup", path: "../..")],
  targets: [
    .executableTarget(
      name: "Consumer",
      dependencies: [.product(name: "SkipBackup", package: "skipbackup")]
    )
  ]
)
