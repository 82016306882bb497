// swift-tools-version: 6.1
import PackageDescription

// Debug builds (and so the tests) can force an errno on any system call
// (Sources/SkipBackupSystem/Mocking.swift); release builds cannot, and pay
// nothing for it.
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
    // The C boundaries, each named for what it holds, imported by
    // SkipBackupSystem (CXattr and CLinux also by SkipBackupMarks and
    // SkipBackupWalk, for the kernel's constants): the extended attributes
    // (<sys/xattr.h>, libattr, the *xattrat calls); the Linux calls and flags
    // glibc hides behind _GNU_SOURCE or variadic functions; the mount
    // namespace and mount API of `skipbackup run`; its fanotify watch; and
    // btrfs's ioctls for `run --snapshot`.
    .target(
      name: "CXattr",
      linkerSettings: [.linkedLibrary("attr")]
    ),
    .target(name: "CLinux"),
    .target(name: "CMount"),
    .target(name: "CFanotify"),
    .target(name: "CBtrfs"),
    // The C boundary of `skipbackup browse`: ncurses (libncurses-dev), whose
    // static libraries keep the release tool one static binary.
    .target(
      name: "CNcurses",
      linkerSettings: [.linkedLibrary("ncursesw"), .linkedLibrary("tinfo")]
    ),
    // The layers below the Apple API, one target each, so that a layer
    // cannot import the layers above it (the build's import check refuses a
    // module it does not reach; scripts/lint one it reaches only through
    // another).
    // The system layer: every raw call as a system_* wrapper, SystemCall,
    // SkipBackupError and its messages, the one write loop, debug-only mocking.
    .target(
      name: "SkipBackupSystem",
      dependencies: [
        "CXattr", "CLinux", "CMount", "CFanotify", "CBtrfs",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    // Attributes and mechanisms: FileItem, ExtendedAttributes, the five
    // mechanisms, inheritance, the one listing of an item's attribute names
    // (ItemAttributes, in which the sweep finds its record), replacement
    // files. The sweep's records themselves are SkipBackupSweep's.
    .target(
      name: "SkipBackupMarks",
      dependencies: [
        "CXattr", "CLinux", "SkipBackupSystem",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    // The descriptor-relative tree walk, on one thread or several.
    .target(
      name: "SkipBackupWalk",
      dependencies: [
        "CLinux", "SkipBackupSystem", "SkipBackupMarks",
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
      dependencies: ["SkipBackupCore", .product(name: "SystemPackage", package: "swift-system")]
    ),
    // The tool's capabilities, one library each, above the core: the build
    // and scripts/lint keep each to the imports it declares. None imports
    // swift-argument-parser: the executable parses, and hands each engine a
    // plain configuration value.
    // What every command prints through: the buffered output, the
    // diagnostics, the progress line, JSON Lines, and the walk's skeleton.
    .target(
      name: "SkipBackupReport",
      dependencies: ["SkipBackupCore", .product(name: "SystemPackage", package: "swift-system")],
      swiftSettings: mocking
    ),
    // The one sized walk: what du, browse and the sweep's sizes count (disk
    // usage or apparent size, each inode with several links once, the
    // bottom-up sums across the parallel walk's threads), each caller
    // classifying the entries its own way. Below the sweep, which sizes
    // what it marks.
    .target(
      name: "SkipBackupSizes",
      dependencies: ["SkipBackupCore", .product(name: "SystemPackage", package: "swift-system")],
      swiftSettings: mocking
    ),
    // The sweep: its rules, the git rule, its records (the only code that
    // reads or writes one) and the trust rule, and the sweep itself.
    .target(
      name: "SkipBackupSweep",
      dependencies: [
        "SkipBackupCore", "SkipBackupReport", "SkipBackupSizes",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    // du: what the marks keep out and what stays in, by mechanism and by
    // sweep rule, with the largest items.
    .target(
      name: "SkipBackupUsage",
      dependencies: [
        "SkipBackupCore", "SkipBackupReport", "SkipBackupSizes", "SkipBackupSweep",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    // mark and clear: items by path or by walk, marks written or removed.
    .target(
      name: "SkipBackupMarking",
      dependencies: [
        "SkipBackupCore", "SkipBackupReport", "SkipBackupSweep",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    // list, status and check: what the marks exclude, read back.
    .target(
      name: "SkipBackupListing",
      dependencies: [
        "SkipBackupCore", "SkipBackupReport", "SkipBackupSweep",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    // export: each backup tool's exclusion syntax, and the file written.
    .target(
      name: "SkipBackupExport",
      dependencies: [
        "SkipBackupCore", "SkipBackupReport",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    // explain: why one item is in or out, and what each backup tool reads.
    .target(
      name: "SkipBackupExplain",
      dependencies: [
        "SkipBackupCore", "SkipBackupReport", "SkipBackupSweep", "SkipBackupExport",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    // run: the private mount namespace, the whiteout layer, the overlay
    // view at each ROOT, and COMMAND's launch; with --for deja-dup, the
    // folders from Déjà Dup's settings (SkipBackupExport).
    .target(
      name: "SkipBackupView",
      dependencies: [
        "SkipBackupCore", "SkipBackupWalk", "SkipBackupReport", "SkipBackupSweep",
        "SkipBackupExport", .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    // browse: the tree in columns, the screen, marks changed in place.
    .target(
      name: "SkipBackupBrowse",
      dependencies: [
        "SkipBackupCore", "SkipBackupReport", "SkipBackupSizes", "SkipBackupSweep",
        "SkipBackupMarking", "CNcurses",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    // The tool: parses the command line into each engine's configuration,
    // and prints.
    .executableTarget(
      name: "skipbackup",
      dependencies: [
        "SkipBackupCore", "SkipBackupReport", "SkipBackupUsage", "SkipBackupSweep",
        "SkipBackupMarking", "SkipBackupListing", "SkipBackupExport", "SkipBackupExplain",
        "SkipBackupView", "SkipBackupBrowse",
        .product(name: "SystemPackage", package: "swift-system"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      swiftSettings: mocking
    ),
    // Runs one library call in a process of its own, for tests that need
    // another user than root (EACCES) or a process that ends.
    .executableTarget(
      name: "skipbackup-probe",
      dependencies: ["SkipBackup", "SkipBackupListing", "SkipBackupReport", "SkipBackupSystem"],
      path: "Tests/Probe"
    ),
    // Temporary trees, processes with exact argument bytes, and the peers.
    .target(
      name: "TestSupport",
      path: "Tests/Support"
    ),
    .testTarget(
      name: "SkipBackupTests",
      dependencies: [
        "SkipBackup", "SkipBackupCore", "TestSupport",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    .testTarget(
      name: "CommandLineTests",
      dependencies: ["TestSupport"]
    ),
    // Each capability's code in process, against the peers nobody here
    // wrote: Python, borg, and the real filesystem.
    .testTarget(
      name: "SkipBackupReportTests",
      dependencies: [
        "SkipBackupReport", "SkipBackupCore", "TestSupport",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    .testTarget(
      name: "SkipBackupMarkingTests",
      dependencies: [
        "SkipBackupMarking", "SkipBackupReport", "SkipBackupCore", "TestSupport",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    .testTarget(
      name: "SkipBackupListingTests",
      dependencies: [
        "SkipBackupListing", "SkipBackupReport", "SkipBackupCore", "TestSupport",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    .testTarget(
      name: "SkipBackupExplainTests",
      dependencies: [
        "SkipBackupExplain", "SkipBackupReport", "SkipBackupCore", "TestSupport",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    .testTarget(
      name: "SkipBackupExportTests",
      dependencies: [
        "SkipBackupExport", "SkipBackupListing", "SkipBackupReport", "SkipBackupCore",
        "TestSupport", .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    // du, the sweep and browse in process: the sized walk through each of
    // its callers against GNU du, the sweep's records against the attr tools.
    .testTarget(
      name: "SkipBackupUsageTests",
      dependencies: [
        "SkipBackupUsage", "SkipBackupSizes", "SkipBackupReport", "SkipBackupCore", "TestSupport",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    .testTarget(
      name: "SkipBackupSweepTests",
      dependencies: [
        "SkipBackupSweep", "SkipBackupReport", "SkipBackupCore", "TestSupport",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    .testTarget(
      name: "SkipBackupViewTests",
      dependencies: [
        "SkipBackupView", "SkipBackupReport", "SkipBackupCore", "TestSupport",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    .testTarget(
      name: "SkipBackupBrowseTests",
      dependencies: [
        "SkipBackupBrowse", "SkipBackupSizes", "SkipBackupReport", "SkipBackupCore", "TestSupport",
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: mocking
    ),
    // The executable's own code: the command line, parsed into each
    // engine's configuration.
    .testTarget(
      name: "ParsingTests",
      dependencies: [
        "skipbackup", "TestSupport", "SkipBackupCore", "SkipBackupReport", "SkipBackupMarking",
        "SkipBackupListing", "SkipBackupExplain", "SkipBackupExport", "SkipBackupUsage",
        "SkipBackupView", "SkipBackupSweep", "SkipBackupBrowse",
        .product(name: "SystemPackage", package: "swift-system"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      swiftSettings: mocking
    ),
  ]
)

// The libFuzzer targets of Fuzz/, one for each decoder of bytes others
// wrote, built only by scripts/fuzz (SKIPBACKUP_FUZZ=1 and
// `-sanitize=fuzzer,address`, in .build-fuzz): libFuzzer's runtime brings the
// main function, so a plain `swift build` could not link them.
let fuzzTargets: [(name: String, rooms: [Target.Dependency])] = [
  ("sweep-record", ["SkipBackupSweep"]),
  ("mac-forms", ["SkipBackupCore"]),
  ("cachedir-tag", ["SkipBackupCore"]),
  ("mountinfo", ["SkipBackupView"]),
  ("rules", ["SkipBackupSweep"]),
  ("glob", ["SkipBackupSweep"]),
  ("display", ["SkipBackupCore"]),
  ("exclusions", ["SkipBackupExport"]),
]
if Context.environment["SKIPBACKUP_FUZZ"] != nil {
  package.targets += fuzzTargets.map { target in
    .executableTarget(
      name: "fuzz-" + target.name, dependencies: target.rooms, path: "Fuzz/" + target.name)
  }
}
