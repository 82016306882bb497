// Code as it is written for iOS, with the one line that differs on Linux.
import Foundation
import SkipBackup

let directory = CommandLine.arguments[1]

// QA1719, listings 1 and 2.
let database = directory + "/offline.db"
_ = FileManager.default.createFile(atPath: database, contents: Data("rows".utf8))
guard addSkipBackupAttributeToItem(atPath: database) else { exit(1) }

// The resource value: on iOS `try url.setResourceValues(values)`.
var values = URLResourceValues()
values.isExcludedFromBackup = true
let downloads = URL(fileURLWithPath: directory + "/Downloads", isDirectory: true)
try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
try downloads.setBackupResourceValues(values)

let thumbnails = URL(fileURLWithPath: directory + "/thumbnails.cache")
_ = FileManager.default.createFile(atPath: thumbnails.path, contents: Data())
try thumbnails.setExcludedFromBackup(true)

print(try downloads.isExcludedFromBackup, try thumbnails.isExcludedFromBackup)
