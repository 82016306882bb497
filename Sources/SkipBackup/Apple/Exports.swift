@_exported import SkipBackupCore
