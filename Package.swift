// swift-tools-version: 6.1
import PackageDescription

// Debug builds (and so the tests) can force an errno on any system call
// (Sources/SkipBackupCore/System/Mocking.swift); release builds cannot, and
// pay nothing for it.
let mocking: [SwiftSetting] = [.define("ENABLE_MOCKING", .when(configuration: .debug))]

let package = Package(
  name: "skipbackup",
  products: [
    .library(name: "SkipBackup", targets: ["SkipBackup"]),
    .executable(name: "skipbackup", targets: ["skipbackup"]),
    // The C boundary, for Benchmarks/, whose floor is the raw getxattr(2) the library calls.
    .library(name: "CXattr", targets: ["CXattr"]),
  ],
  dependencies: [
    // FilePath, FileDescriptor and Errno: byte-exact paths and errno values.
    .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    // The command-line interface of the skipbackup tool.
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    // `swift package generate-documentation` for the DocC catalog.
    .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
  ],
  targets: [
    // The C boundary: <sys/xattr.h>, libattr, and shims for what Swift cannot call.
    .target(
      name: "CXattr",
      linkerSettings: [.linkedLibrary("attr")]
    ),
    // The C boundary of `skipbackup browse`: ncurses (libncurses-dev), whose
    // static libraries keep the release tool one static binary.
    .target(
      name: "CNcurses",
      linkerSettings: [.linkedLibrary("ncursesw"), .linkedLibrary("tinfo")]
    ),
    // The layers below the Apple API, one target each, so that the compiler
    // keeps the architecture: a layer can import only the layers below it.
    // The system layer: every raw call as a system_* wrapper, SystemCall,
    // SkipBackupError and its messages, the one write loop, debug-only mocking.
    .target(
      name: "SkipBackupSystem",
      dependencies: [
        "CXattr",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    // Attributes and mechanisms: FileItem, ExtendedAttributes, the five
    // mechanisms, inheritance, the sweep's records, replacement files.
    .target(
      name: "SkipBackupMarks",
      dependencies: [
        "CXattr", "SkipBackupSystem",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    // The descriptor-relative tree walk, on one thread or several.
    .target(
      name: "SkipBackupWalk",
      dependencies: [
        "CXattr", "SkipBackupSystem", "SkipBackupMarks",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    // The three layers as one module, with no Foundation: what the tool and
    // the Apple API import.
    .target(
      name: "SkipBackupCore",
      dependencies: ["SkipBackupSystem", "SkipBackupMarks", "SkipBackupWalk"]
    ),
    // The library people import: the core plus Apple's API on URL and FilePath.
    .target(
      name: "SkipBackup",
      dependencies: ["SkipBackupCore"]
    ),
    .executableTarget(
      name: "skipbackup",
      dependencies: [
        "SkipBackupCore",
        "CNcurses",
        .product(name: "SystemPackage", package: "swift-system"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]
    ),
    // Runs one library call in a process of its own, for tests that need
    // another user than root (EACCES).
    .executableTarget(
      name: "skipbackup-probe",
      dependencies: ["SkipBackup"],
      path: "Tests/Probe"
    ),
    // Temporary trees, processes with exact argument bytes, and the peers.
    .target(
      name: "TestSupport",
      path: "Tests/Support"
    ),
    .testTarget(
      name: "SkipBackupTests",
      dependencies: ["SkipBackup", "TestSupport"],
      swiftSettings: mocking
    ),
    .testTarget(
      name: "CommandLineTests",
      dependencies: ["TestSupport"]
    ),
    // The tool's pure code in process (path lexing, the rule writers, JSON
    // Lines and Base64, argv bytes), against Python as the oracle.
    .testTarget(
      name: "CLIUnitTests",
      dependencies: ["skipbackup", "TestSupport"]
    ),
  ]
)
