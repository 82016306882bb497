#define _GNU_SOURCE
#include "CXattr.h"

#include <attr/error_context.h>
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

// The *xattrat system call numbers are the same on every architecture that
// uses the generic table (x86_64 and aarch64 among them).
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_getxattrat
#define __NR_getxattrat 464
#endif
#ifndef __NR_listxattrat
#define __NR_listxattrat 465
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif

// struct xattr_args from <linux/xattr.h> (Linux 6.13); Debian 12's headers
// predate it.
struct cxattr_xattr_args {
  uint64_t value;
  uint32_t size;
  uint32_t flags;
};

ssize_t cxattr_getxattrat(int dirfd, const char *path, unsigned int at_flags,
                          const char *name, void *value, size_t size) {
  struct cxattr_xattr_args args = {(uint64_t)(uintptr_t)value, (uint32_t)size, 0};
  return syscall(__NR_getxattrat, dirfd, path, at_flags, name, &args, sizeof args);
}

int cxattr_setxattrat(int dirfd, const char *path, unsigned int at_flags,
                      const char *name, const void *value, size_t size, int flags) {
  struct cxattr_xattr_args args = {(uint64_t)(uintptr_t)value, (uint32_t)size,
                                   (uint32_t)flags};
  return (int)syscall(__NR_setxattrat, dirfd, path, at_flags, name, &args, sizeof args);
}

ssize_t cxattr_listxattrat(int dirfd, const char *path, unsigned int at_flags,
                           char *list, size_t size) {
  return syscall(__NR_listxattrat, dirfd, path, at_flags, list, size);
}

int cxattr_removexattrat(int dirfd, const char *path, unsigned int at_flags,
                         const char *name) {
  return (int)syscall(__NR_removexattrat, dirfd, path, at_flags, name);
}

// The context libattr reports a failure to read /etc/xattr.conf through:
// the error callback keeps errno (EINVAL for a line it cannot parse, which
// libattr sets before the call), and names are not quoted, since the
// message is never printed.
struct cxattr_conf_error {
  struct error_context context;
  int errno_value;
};

static void cxattr_conf_error_record(struct error_context *context, const char *format, ...) {
  (void)format;
  ((struct cxattr_conf_error *)context)->errno_value = errno != 0 ? errno : EINVAL;
}

static const char *cxattr_conf_error_quote(struct error_context *context, const char *name) {
  (void)context;
  return name;
}

static void cxattr_conf_error_quote_free(struct error_context *context, const char *name) {
  (void)context;
  (void)name;
}

int cxattr_attr_copy_action(const char *name) {
  struct cxattr_conf_error failure = {
      {cxattr_conf_error_record, cxattr_conf_error_quote, cxattr_conf_error_quote_free}, 0};
  int action = attr_copy_action(name, &failure.context);
  if (failure.errno_value != 0) {
    errno = failure.errno_value;
    return -1;
  }
  return action;
}
