#define _GNU_SOURCE
#include "CLinux.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

ssize_t clinux_getdents64(int fd, void *buffer, size_t size) {
  return getdents64(fd, buffer, size);
}

int clinux_pipe2(int fds[2], int flags) { return pipe2(fds, flags); }

int clinux_statx(int dirfd, const char *path, int flags, unsigned int mask,
                 struct statx *buffer) {
  return (int)syscall(SYS_statx, dirfd, path, flags, mask, buffer);
}

int clinux_get_inode_flags(int fd, int *flags) { return ioctl(fd, FS_IOC_GETFLAGS, flags); }

int clinux_set_inode_flags(int fd, const int *flags) {
  return ioctl(fd, FS_IOC_SETFLAGS, flags);
}

int clinux_openat(int dirfd, const char *path, int flags, mode_t mode) {
  return openat(dirfd, path, flags, mode);
}

int clinux_dup_cloexec(int fd) { return fcntl(fd, F_DUPFD_CLOEXEC, 0); }

#ifndef __NR_openat2
#define __NR_openat2 437
#endif

int clinux_openat2(int dirfd, const char *path, unsigned long long flags, unsigned long long mode,
                   unsigned long long resolve) {
  // struct open_how of <linux/openat2.h>: flags, mode, resolve, 24 bytes.
  unsigned long long how[3] = {flags, mode, resolve};
  return (int)syscall(__NR_openat2, dirfd, path, how, sizeof how);
}

int clinux_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
                     unsigned int flags) {
  // glibc 2.36 declares renameat2 in <stdio.h>, which nothing else here
  // needs: the system call itself is the same.
  return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
}

int clinux_mknodat(int dirfd, const char *path, mode_t mode, unsigned int major,
                   unsigned int minor) {
  return mknodat(dirfd, path, mode, makedev(major, minor));
}

int clinux_fork(void) { return (int)fork(); }

int clinux_set_parent_death_signal(int signal) {
  return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}

int clinux_wait_signal(const sigset_t *set, int *code) {
  siginfo_t info;
  int result = sigwaitinfo(set, &info);
  if (result > 0) *code = info.si_code;
  return result;
}
