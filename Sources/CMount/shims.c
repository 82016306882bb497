#define _GNU_SOURCE
#include "CMount.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_move_mount
#define __NR_move_mount 429
#endif
#ifndef __NR_fsopen
#define __NR_fsopen 430
#endif
#ifndef __NR_fsconfig
#define __NR_fsconfig 431
#endif
#ifndef __NR_fsmount
#define __NR_fsmount 432
#endif
#ifndef __NR_open_tree
#define __NR_open_tree 428
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif

// A sanitizer's runtime may keep a thread of its own (ThreadSanitizer starts
// one at the first pthread_create and keeps it), and unshare(CLONE_NEWUSER)
// refuses a process of more than one thread (EINVAL): under TSan every
// ordinary user's view failed so. The sanitizers' call for a process about
// to enter a sandbox stops that thread (sanitizer/common_interface_defs.h);
// without a sanitizer the weak reference is null.
extern void __sanitizer_sandbox_on_notify(void *arguments) __attribute__((weak));

int cmount_unshare(int flags) {
  if ((flags & CLONE_NEWUSER) && __sanitizer_sandbox_on_notify)
    __sanitizer_sandbox_on_notify(0);
  return unshare(flags);
}

int cmount_mount(const char *source, const char *target, const char *type, unsigned long flags,
                 const void *data) {
  return (int)syscall(__NR_mount, source, target, type, flags, data);
}

int cmount_fsopen(const char *fs_name, unsigned int flags) {
  return (int)syscall(__NR_fsopen, fs_name, flags);
}

int cmount_fsconfig(int fd, unsigned int cmd, const char *key, const void *value, int aux) {
  return (int)syscall(__NR_fsconfig, fd, cmd, key, value, aux);
}

int cmount_fsmount(int fd, unsigned int flags, unsigned int attr_flags) {
  return (int)syscall(__NR_fsmount, fd, flags, attr_flags);
}

int cmount_move_mount(int from_dirfd, const char *from_path, int to_dirfd, const char *to_path,
                      unsigned int flags) {
  return (int)syscall(__NR_move_mount, from_dirfd, from_path, to_dirfd, to_path, flags);
}

int cmount_open_tree(int dirfd, const char *path, unsigned int flags) {
  return (int)syscall(__NR_open_tree, dirfd, path, flags);
}

// struct mount_attr from <linux/mount.h> (Linux 5.12).
struct cmount_mount_attr {
  uint64_t attr_set;
  uint64_t attr_clr;
  uint64_t propagation;
  uint64_t userns_fd;
};

int cmount_mount_setattr(int dirfd, const char *path, unsigned int flags, uint64_t set) {
  struct cmount_mount_attr attr = {set, 0, 0, 0};
  return (int)syscall(__NR_mount_setattr, dirfd, path, flags, &attr, sizeof attr);
}
