// The C boundary of SkipBackup: the headers Swift imports, and shims for the
// few calls Swift cannot reach directly. Every shim says why it exists.
#ifndef CXATTR_H
#define CXATTR_H

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/stat.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <unistd.h>

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

// The flags of the *xattrat calls, for Swift, which cannot see the macros.
#define CXATTR_AT_FDCWD AT_FDCWD
#define CXATTR_AT_SYMLINK_NOFOLLOW AT_SYMLINK_NOFOLLOW
// AT_EMPTY_PATH is declared only under _GNU_SOURCE; this is its Linux value.
#define CXATTR_AT_EMPTY_PATH 0x1000

// O_TMPFILE likewise needs _GNU_SOURCE; glibc defines its parts unconditionally.
static const int CXATTR_O_TMPFILE = __O_TMPFILE;
// O_PATH too: an open that reads nothing, for fstatfs(2) on any item (the
// filesystem that explains an EPERM).
static const int CXATTR_O_PATH = __O_PATH;

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

// getdents64(2): glibc declares it only under _GNU_SOURCE, which Swift's
// Glibc module does not define.
ssize_t cxattr_getdents64(int fd, void *buffer, size_t size);

// pipe2(2) likewise: a pipe closed on exec from the start, for the child
// processes sweep's gitignore rule runs.
int cxattr_pipe2(int fds[2], int flags);

// statx(2) likewise needs _GNU_SOURCE; the walk reads the nodump attribute
// from it without opening the file.
int cxattr_statx(int dirfd, const char *path, int flags, unsigned int mask,
                 struct statx *buffer);

// ioctl(2) is variadic. FS_IOC_GETFLAGS and FS_IOC_SETFLAGS read and write
// an int, whatever the macros' declared type says.
int cxattr_get_inode_flags(int fd, int *flags);
int cxattr_set_inode_flags(int fd, const int *flags);

// open(2) and openat(2) are variadic; the mode is only read with O_CREAT or
// O_TMPFILE.
int cxattr_openat(int dirfd, const char *path, int flags, mode_t mode);

// openat2(2) (Linux 5.6): an open whose resolution the kernel restricts
// (RESOLVE_NO_SYMLINKS refuses a symbolic link anywhere on the way, not
// only at the end as O_NOFOLLOW does). glibc 2.36 has no wrapper and no
// struct open_how in the headers Swift sees. -1 with ENOSYS before 5.6.
static const unsigned long long CXATTR_RESOLVE_NO_XDEV = 0x01;
static const unsigned long long CXATTR_RESOLVE_NO_MAGICLINKS = 0x02;
static const unsigned long long CXATTR_RESOLVE_NO_SYMLINKS = 0x04;
static const unsigned long long CXATTR_RESOLVE_BENEATH = 0x08;
static const unsigned long long CXATTR_RESOLVE_IN_ROOT = 0x10;
int cxattr_openat2(int dirfd, const char *path, unsigned long long flags, unsigned long long mode,
                   unsigned long long resolve);

// renameat2(2) and its flags: glibc declares them only under _GNU_SOURCE.
static const unsigned int CXATTR_RENAME_NOREPLACE = 1;
static const unsigned int CXATTR_RENAME_EXCHANGE = 2;
static const unsigned int CXATTR_RENAME_WHITEOUT = 4;
int cxattr_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
                     unsigned int flags);

// fcntl(2) is variadic: F_DUPFD_CLOEXEC, a duplicate closed on exec at once.
int cxattr_dup_cloexec(int fd);

// The open(2) flags Swift's Glibc module does not show (they need
// _GNU_SOURCE), by their Linux values.
static const int CXATTR_O_NOATIME = 01000000;
// AT_REMOVEDIR and AT_NO_AUTOMOUNT, for unlinkat(2) and the *at lookups.
static const int CXATTR_AT_REMOVEDIR = 0x200;
static const int CXATTR_AT_NO_AUTOMOUNT = 0x800;

// skipbackup run: a private mount namespace and the new mount
// API. unshare(2) is declared only under _GNU_SOURCE; glibc 2.36 declares
// fsopen, fsconfig, fsmount and move_mount in <sys/mount.h>, which clashes
// with <linux/fs.h> above, so all of them go through syscall(2) here.
static const int CXATTR_CLONE_NEWNS = 0x00020000;
static const int CXATTR_CLONE_NEWUSER = 0x10000000;
static const unsigned long CXATTR_MS_REC = 16384;
static const unsigned long CXATTR_MS_PRIVATE = 1UL << 18;
static const unsigned int CXATTR_FSOPEN_CLOEXEC = 1;
static const unsigned int CXATTR_FSCONFIG_SET_FLAG = 0;
static const unsigned int CXATTR_FSCONFIG_SET_STRING = 1;
static const unsigned int CXATTR_FSCONFIG_CMD_CREATE = 6;
static const unsigned int CXATTR_FSMOUNT_CLOEXEC = 1;
static const unsigned int CXATTR_MOUNT_ATTR_RDONLY = 1;
static const unsigned int CXATTR_MOVE_MOUNT_F_EMPTY_PATH = 4;
static const unsigned int CXATTR_MOVE_MOUNT_T_EMPTY_PATH = 0x40;
int cxattr_unshare(int flags);
int cxattr_mount(const char *source, const char *target, const char *type, unsigned long flags,
                 const void *data);
int cxattr_fsopen(const char *fs_name, unsigned int flags);
int cxattr_fsconfig(int fd, unsigned int cmd, const char *key, const void *value, int aux);
int cxattr_fsmount(int fd, unsigned int flags, unsigned int attr_flags);
int cxattr_move_mount(int from_dirfd, const char *from_path, int to_dirfd, const char *to_path,
                      unsigned int flags);
// skipbackup run at each mount shape: the view of / entered as COMMAND's
// root with /proc, /sys, /dev, /run and /tmp bound back (open_tree, Linux
// 5.2), a file mounted on a file bound over the view read-only
// (mount_setattr, Linux 5.12), and the real mount's flags carried to the
// view's (statfs's f_flags, <sys/statvfs.h>'s ST_* under _GNU_SOURCE, to
// fsmount's MOUNT_ATTR_*, <linux/mount.h>).
static const unsigned int CXATTR_OPEN_TREE_CLONE = 1;
static const unsigned int CXATTR_OPEN_TREE_CLOEXEC = O_CLOEXEC;
static const unsigned int CXATTR_AT_RECURSIVE = 0x8000;
static const unsigned int CXATTR_MOUNT_ATTR_NOSUID = 0x2;
static const unsigned int CXATTR_MOUNT_ATTR_NODEV = 0x4;
static const unsigned int CXATTR_MOUNT_ATTR_NOEXEC = 0x8;
static const unsigned int CXATTR_MOUNT_ATTR_NOATIME = 0x10;
static const unsigned int CXATTR_MOUNT_ATTR_STRICTATIME = 0x20;
static const unsigned int CXATTR_MOUNT_ATTR_NODIRATIME = 0x80;
static const unsigned long CXATTR_ST_NOSUID = 2;
static const unsigned long CXATTR_ST_NODEV = 4;
static const unsigned long CXATTR_ST_NOEXEC = 8;
static const unsigned long CXATTR_ST_NOATIME = 1024;
static const unsigned long CXATTR_ST_NODIRATIME = 2048;
static const unsigned long CXATTR_ST_RELATIME = 4096;
int cxattr_open_tree(int dirfd, const char *path, unsigned int flags);
// mount_setattr(2) setting `set` and clearing nothing: struct mount_attr is
// in no header of glibc 2.36.
int cxattr_mount_setattr(int dirfd, const char *path, unsigned int flags, uint64_t set);
// mknodat(2) with a device number: makedev is a macro.
int cxattr_mknodat(int dirfd, const char *path, mode_t mode, unsigned int major,
                   unsigned int minor);

// skipbackup run --snapshot: btrfs's snapshot ioctls (linux/btrfs.h, included
// by shims.c alone: its structures are all the C side needs). ioctl(2) is
// variadic. The magic number is statfs(2)'s f_type of a btrfs filesystem;
// 256 is the inode of every subvolume's root directory (the kernel's
// BTRFS_FIRST_FREE_OBJECTID), which a snapshot must be taken of.
static const unsigned long CXATTR_BTRFS_SUPER_MAGIC = 0x9123683E;
static const unsigned long long CXATTR_BTRFS_SUBVOLUME_ROOT_INODE = 256;
static const unsigned long long CXATTR_BTRFS_SUBVOL_RDONLY = 1ULL << 1;
// BTRFS_IOC_SNAP_CREATE_V2 on the directory `destination`: a snapshot of the
// subvolume whose root `source` is open, named `name`, read-only when asked.
int cxattr_btrfs_snapshot_create(int destination, int source, const char *name, int read_only);
// BTRFS_IOC_SNAP_DESTROY on the directory `parent`: deletes its subvolume `name`.
int cxattr_btrfs_snapshot_destroy(int parent, const char *name);
// BTRFS_IOC_SUBVOL_GETFLAGS and BTRFS_IOC_SUBVOL_SETFLAGS on a subvolume's
// root: its read-only flag, which must be cleared before an ordinary user may
// delete it (the kernel's permission check asks for write access to it).
int cxattr_btrfs_subvolume_get_flags(int fd, unsigned long long *flags);
int cxattr_btrfs_subvolume_set_flags(int fd, const unsigned long long *flags);
// BTRFS_IOC_GET_SUBVOL_ROOTREF (any user): the subvolumes made directly in
// the subvolume `fd` is in, by tree id from *next on: writes each one's tree
// id and the number of the directory that holds it (room for
// CXATTR_BTRFS_CHILDREN_MOST each), sets *count and *next. Returns 1 when
// more follow (call again), 0 after the last, or -1 with errno.
#define CXATTR_BTRFS_CHILDREN_MOST 255
int cxattr_btrfs_subvolume_children(int fd, unsigned long long *next,
                                    unsigned long long *treeids, unsigned long long *dirids,
                                    int *count);
// BTRFS_IOC_INO_LOOKUP_USER (any user who may search each directory on the
// way): where the subvolume `treeid`, made in the directory `dirid`, is
// below the subvolume's root `fd`: that directory's path from it, "" or
// ending in "/", then the subvolume's name, NUL-terminated in `path` (room
// for CXATTR_BTRFS_PLACE_MOST). 0, or -1 with errno.
#define CXATTR_BTRFS_PLACE_MOST 4096
int cxattr_btrfs_subvolume_place(int fd, unsigned long long dirid, unsigned long long treeid,
                                 char *path);
// BTRFS_IOC_TREE_SEARCH_V2 (CAP_SYS_ADMIN) over the tree of the subvolume
// `fd` is in, which reads its items without bringing an inode into memory,
// one call a step, over the objectids from `first` to `last` (set by
// cxattr_btrfs_inode_search_start): the numbers of the inodes a judgement of
// marks must look at (one that holds an extended attribute, has the nodump
// flag, or is a character device), ascending, written to `inodes` (room for
// CXATTR_BTRFS_SEARCH_MOST), a number possibly repeating the previous step's
// last. Returns how many, *done set after the last, or -1 with errno.
struct cxattr_btrfs_inode_search;
#define CXATTR_BTRFS_SEARCH_MOST 32768
// The search's state, with its megabyte of buffer, used for one range after
// another; stops the process when there is no memory for it, as Swift's own
// allocations do.
struct cxattr_btrfs_inode_search *cxattr_btrfs_inode_search_new(void);
void cxattr_btrfs_inode_search_start(
    struct cxattr_btrfs_inode_search *search, unsigned long long first, unsigned long long last);
void cxattr_btrfs_inode_search_free(struct cxattr_btrfs_inode_search *search);
// Whether the kernel allows the search on the subvolume `fd` is in: one
// search for one item of its root directory (inode 256). 0, or -1 with errno.
int cxattr_btrfs_inode_search_allowed(int fd);
long cxattr_btrfs_inode_search_step(
    int fd, struct cxattr_btrfs_inode_search *search, unsigned long long *inodes, int *done);

// COMMAND as a child that skipbackup waits for (run --snapshot deletes the
// snapshot after it): fork(2), a signal to the child, the parent-death
// signal (prctl(2) is variadic), and sigwaitinfo(2) with the sender's code
// (siginfo_t's si_code is behind a union Swift cannot name).
int cxattr_fork(void);
int cxattr_set_parent_death_signal(int signal);
int cxattr_wait_signal(const sigset_t *set, int *code);

// skipbackup run watches each ROOT while its view is made (fanotify(7)):
// the events of a directory's entries and attributes, each naming its
// directory by file handle and the entry by name (FAN_REPORT_DFID_NAME,
// Linux 5.9), for a whole filesystem as root (FAN_MARK_FILESYSTEM) or for
// each directory walked (inode marks, which an ordinary user may make from
// Linux 5.13). The handles of the walked directories come from
// name_to_handle_at(2) with AT_HANDLE_FID (Linux 6.5), fanotify's own
// encoding. glibc declares name_to_handle_at and struct file_handle only
// under _GNU_SOURCE, so all three calls go through the shims.
static const unsigned int CXATTR_FAN_CLOEXEC = 0x1;
static const unsigned int CXATTR_FAN_NONBLOCK = 0x2;
static const unsigned int CXATTR_FAN_UNLIMITED_QUEUE = 0x10;
static const unsigned int CXATTR_FAN_UNLIMITED_MARKS = 0x20;
static const unsigned int CXATTR_FAN_REPORT_DFID_NAME = 0x400 | 0x800;
static const unsigned int CXATTR_FAN_MARK_ADD = 0x1;
static const unsigned int CXATTR_FAN_MARK_DONT_FOLLOW = 0x4;
static const unsigned int CXATTR_FAN_MARK_ONLYDIR = 0x8;
static const unsigned int CXATTR_FAN_MARK_FILESYSTEM = 0x100;
static const unsigned int CXATTR_FAN_MARK_FLUSH = 0x80;
static const uint64_t CXATTR_FAN_ATTRIB = 0x4;
static const uint64_t CXATTR_FAN_MOVED_FROM = 0x40;
static const uint64_t CXATTR_FAN_MOVED_TO = 0x80;
static const uint64_t CXATTR_FAN_CREATE = 0x100;
static const uint64_t CXATTR_FAN_DELETE = 0x200;
static const uint64_t CXATTR_FAN_Q_OVERFLOW = 0x4000;
static const uint64_t CXATTR_FAN_EVENT_ON_CHILD = 0x08000000;
static const uint64_t CXATTR_FAN_ONDIR = 0x40000000;
static const unsigned char CXATTR_FAN_EVENT_INFO_TYPE_DFID_NAME = 2;
static const unsigned char CXATTR_FANOTIFY_METADATA_VERSION = 3;
static const int CXATTR_AT_HANDLE_FID = 0x200;
static const int CXATTR_AT_SYMLINK_FOLLOW = 0x400;
// MAX_HANDLE_SZ of <fcntl.h>: the longest handle a filesystem encodes.
static const unsigned int CXATTR_MAX_HANDLE_SZ = 128;
int cxattr_fanotify_init(unsigned int flags, unsigned int event_f_flags);
int cxattr_fanotify_mark(int fanotify_fd, unsigned int flags, uint64_t mask, int dirfd,
                         const char *path);
// name_to_handle_at(2) into `handle`, which holds struct file_handle and
// CXATTR_MAX_HANDLE_SZ bytes after it (handle_bytes is set here).
int cxattr_name_to_handle_at(int dirfd, const char *path, void *handle, int *mount_id,
                             int flags);

// BTRFS_IOC_GET_SUBVOL_INFO (Linux 4.18, any user) on a descriptor of any
// item of a subvolume: which subvolume it is, as no path can tell (every
// subvolume's root is inode 256): its tree id (the subvolume ID) and the
// transaction that made it (otransid), which a subvolume made later under a
// reused ID does not share. The filesystem is BTRFS_IOC_FS_INFO's fsid,
// 16 bytes into `fsid`. 0, or -1 with errno.
int cxattr_btrfs_subvolume_identity(int fd, unsigned long long *treeid,
                                    unsigned long long *otransid);
int cxattr_btrfs_filesystem_id(int fd, unsigned char *fsid);


#endif
