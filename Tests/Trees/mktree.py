#!/usr/bin/env python3
"""Makes a tree of marked and unmarked files, the same for the same
arguments: what scripts/benchmark* walk, list and mark.

usage: mktree.py ROOT NFILES [MARK_EVERY]

NFILES files of one byte, 100 a directory, in directories two levels deep
(ROOT/dNNNN/eNN/, 20 to a dNNNN). Every MARK_EVERY-th file (default 10) is
marked, alternately with the legacy attribute (user.com.apple.MobileBackup
= 0x01) and the resource value (user.com.apple.metadata:
com_apple_backup_excludeItem = the 61-byte binary plist of
"com.apple.backupd"); every 50th leaf directory gets the resource value too.
Prints a summary line.
"""
import os
import plistlib
import sys

LEGACY = "user.com.apple.MobileBackup"
RESOURCE = "user.com.apple.metadata:com_apple_backup_excludeItem"
RESOURCE_VALUE = plistlib.dumps("com.apple.backupd", fmt=plistlib.FMT_BINARY)
assert len(RESOURCE_VALUE) == 61

root, wanted = sys.argv[1], int(sys.argv[2])
every = int(sys.argv[3]) if len(sys.argv) > 3 else 10
os.makedirs(root, exist_ok=True)
files = marked = leaves = 0
while files < wanted:
    leaf = os.path.join(root, f"d{leaves // 20:04d}", f"e{leaves % 20:02d}")
    os.makedirs(leaf, exist_ok=True)
    if leaves % 50 == 49:
        os.setxattr(leaf, RESOURCE, RESOURCE_VALUE)
    leaves += 1
    for index in range(min(100, wanted - files)):
        path = os.path.join(leaf, f"file{index:03d}.dat")
        with open(path, "wb") as out:
            out.write(b"x")
        if files % every == 0:
            legacy = (files // every) % 2 == 0
            os.setxattr(path, *((LEGACY, b"\x01") if legacy else (RESOURCE, RESOURCE_VALUE)))
            marked += 1
        files += 1
print(f"{files} files in {leaves} leaf directories under {root}; {marked} files marked")
