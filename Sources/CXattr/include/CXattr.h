// The C boundary of the extended attributes: <sys/xattr.h>, libattr, and
// shims for Linux 6.13's *xattrat calls, which Swift cannot reach. The AT_
// flags they take are CLinux's.
#ifndef CXATTR_H
#define CXATTR_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/xattr.h>

// libattr (Debian libattr1-dev): attr_copy_action reads /etc/xattr.conf, which
// says which extended attributes a copy passes over.
// Without the package the compiler would only say "'attr/libattr.h' file not
// found", which names no package: a consumer of SkipBackup meets this first.
#if defined(__has_include) && !__has_include(<attr/libattr.h>)
#error "SkipBackup needs libattr's header and library: install the Debian/Ubuntu package libattr1-dev (apt-get install libattr1-dev; Fedora: libattr-devel)"
#endif
#include <attr/libattr.h>

// attr_copy_action(3) with an error context: libattr answers 0 ("copy it")
// for every name when /etc/xattr.conf is there but cannot be read or
// parsed, and says so only through the context (attr_copy_action.c). This
// returns -1 with errno set then, so that a save does not copy what the
// file says to skip (security.evm, "may only be written by kernel") unseen.
int cxattr_attr_copy_action(const char *name);

// Linux 6.13's getxattrat, setxattrat, listxattrat and removexattrat: glibc
// 2.36 declares none of them, and Swift cannot call the variadic syscall(2).
// They return -1 with errno ENOSYS on older kernels.
ssize_t cxattr_getxattrat(int dirfd, const char *path, unsigned int at_flags,
                          const char *name, void *value, size_t size);
int cxattr_setxattrat(int dirfd, const char *path, unsigned int at_flags,
                      const char *name, const void *value, size_t size, int flags);
ssize_t cxattr_listxattrat(int dirfd, const char *path, unsigned int at_flags,
                           char *list, size_t size);
int cxattr_removexattrat(int dirfd, const char *path, unsigned int at_flags,
                         const char *name);

#endif
