// SkipBackup is the core (attributes, mechanisms, the walk) plus Apple's API
// on URL and FilePath; one import gives both, and FilePath with them.
@_exported import SkipBackupCore
@_exported import SystemPackage
