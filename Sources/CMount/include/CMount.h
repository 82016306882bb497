// The C boundary of skipbackup run's mounts: the private mount namespace
// (unshare) and the new mount API, which glibc 2.36 either does not declare or
// declares in a header that clashes with <linux/fs.h>.
#ifndef CMOUNT_H
#define CMOUNT_H

#include <fcntl.h>
#include <stdint.h>

// unshare(2) is declared only under _GNU_SOURCE; glibc 2.36 declares
// fsopen, fsconfig, fsmount and move_mount in <sys/mount.h>, which clashes
// with <linux/fs.h> (CLinux's), so all of them go through syscall(2) here.
static const int CMOUNT_CLONE_NEWNS = 0x00020000;
static const int CMOUNT_CLONE_NEWUSER = 0x10000000;
static const unsigned long CMOUNT_MS_REC = 16384;
static const unsigned long CMOUNT_MS_PRIVATE = 1UL << 18;
static const unsigned int CMOUNT_FSOPEN_CLOEXEC = 1;
static const unsigned int CMOUNT_FSCONFIG_SET_FLAG = 0;
static const unsigned int CMOUNT_FSCONFIG_SET_STRING = 1;
static const unsigned int CMOUNT_FSCONFIG_CMD_CREATE = 6;
static const unsigned int CMOUNT_FSMOUNT_CLOEXEC = 1;
static const unsigned int CMOUNT_MOUNT_ATTR_RDONLY = 1;
static const unsigned int CMOUNT_MOVE_MOUNT_F_EMPTY_PATH = 4;
static const unsigned int CMOUNT_MOVE_MOUNT_T_EMPTY_PATH = 0x40;
int cmount_unshare(int flags);
int cmount_mount(const char *source, const char *target, const char *type, unsigned long flags,
                 const void *data);
int cmount_fsopen(const char *fs_name, unsigned int flags);
int cmount_fsconfig(int fd, unsigned int cmd, const char *key, const void *value, int aux);
int cmount_fsmount(int fd, unsigned int flags, unsigned int attr_flags);
int cmount_move_mount(int from_dirfd, const char *from_path, int to_dirfd, const char *to_path,
                      unsigned int flags);
// skipbackup run at each mount shape: the view of / entered as COMMAND's
// root with /proc, /sys, /dev, /run and /tmp bound back (open_tree, Linux
// 5.2), a file mounted on a file bound over the view read-only
// (mount_setattr, Linux 5.12), and the real mount's flags carried to the
// view's (statfs's f_flags, <sys/statvfs.h>'s ST_* under _GNU_SOURCE, to
// fsmount's MOUNT_ATTR_*, <linux/mount.h>).
static const unsigned int CMOUNT_OPEN_TREE_CLONE = 1;
static const unsigned int CMOUNT_OPEN_TREE_CLOEXEC = O_CLOEXEC;
static const unsigned int CMOUNT_MOUNT_ATTR_NOSUID = 0x2;
static const unsigned int CMOUNT_MOUNT_ATTR_NODEV = 0x4;
static const unsigned int CMOUNT_MOUNT_ATTR_NOEXEC = 0x8;
static const unsigned int CMOUNT_MOUNT_ATTR_NOATIME = 0x10;
static const unsigned int CMOUNT_MOUNT_ATTR_STRICTATIME = 0x20;
static const unsigned int CMOUNT_MOUNT_ATTR_NODIRATIME = 0x80;
static const unsigned long CMOUNT_ST_NOSUID = 2;
static const unsigned long CMOUNT_ST_NODEV = 4;
static const unsigned long CMOUNT_ST_NOEXEC = 8;
static const unsigned long CMOUNT_ST_NOATIME = 1024;
static const unsigned long CMOUNT_ST_NODIRATIME = 2048;
static const unsigned long CMOUNT_ST_RELATIME = 4096;
int cmount_open_tree(int dirfd, const char *path, unsigned int flags);
// mount_setattr(2) setting `set` and clearing nothing: struct mount_attr is
// in no header of glibc 2.36.
int cmount_mount_setattr(int dirfd, const char *path, unsigned int flags, uint64_t set);

#endif
