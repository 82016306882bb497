// The layers below the Apple API, imported as one module. Each is a target of
// its own so that a layer cannot import one above it (Package.swift).
@_exported import SkipBackupMarks
@_exported import SkipBackupSystem
@_exported import SkipBackupWalk
