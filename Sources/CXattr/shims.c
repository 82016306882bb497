#define _GNU_SOURCE
#include "CXattr.h"

#include <attr/error_context.h>
#include <errno.h>
#include <endian.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>

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

ssize_t cxattr_getdents64(int fd, void *buffer, size_t size) {
  return getdents64(fd, buffer, size);
}

int cxattr_pipe2(int fds[2], int flags) { return pipe2(fds, flags); }

int cxattr_statx(int dirfd, const char *path, int flags, unsigned int mask,
                 struct statx *buffer) {
  return (int)syscall(SYS_statx, dirfd, path, flags, mask, buffer);
}

int cxattr_get_inode_flags(int fd, int *flags) { return ioctl(fd, FS_IOC_GETFLAGS, flags); }

int cxattr_set_inode_flags(int fd, const int *flags) {
  return ioctl(fd, FS_IOC_SETFLAGS, flags);
}

int cxattr_openat(int dirfd, const char *path, int flags, mode_t mode) {
  return openat(dirfd, path, flags, mode);
}

int cxattr_dup_cloexec(int fd) { return fcntl(fd, F_DUPFD_CLOEXEC, 0); }

#ifndef __NR_openat2
#define __NR_openat2 437
#endif

int cxattr_openat2(int dirfd, const char *path, unsigned long long flags, unsigned long long mode,
                   unsigned long long resolve) {
  // struct open_how of <linux/openat2.h>: flags, mode, resolve, 24 bytes.
  unsigned long long how[3] = {flags, mode, resolve};
  return (int)syscall(__NR_openat2, dirfd, path, how, sizeof how);
}

int cxattr_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
                     unsigned int flags) {
  // glibc 2.36 declares renameat2 in <stdio.h> under _GNU_SOURCE, which
  // this file defines after CXattr.h has included it without.
  return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
}

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

int cxattr_unshare(int flags) { return unshare(flags); }

int cxattr_mount(const char *source, const char *target, const char *type, unsigned long flags,
                 const void *data) {
  return (int)syscall(__NR_mount, source, target, type, flags, data);
}

int cxattr_fsopen(const char *fs_name, unsigned int flags) {
  return (int)syscall(__NR_fsopen, fs_name, flags);
}

int cxattr_fsconfig(int fd, unsigned int cmd, const char *key, const void *value, int aux) {
  return (int)syscall(__NR_fsconfig, fd, cmd, key, value, aux);
}

int cxattr_fsmount(int fd, unsigned int flags, unsigned int attr_flags) {
  return (int)syscall(__NR_fsmount, fd, flags, attr_flags);
}

int cxattr_move_mount(int from_dirfd, const char *from_path, int to_dirfd, const char *to_path,
                      unsigned int flags) {
  return (int)syscall(__NR_move_mount, from_dirfd, from_path, to_dirfd, to_path, flags);
}

int cxattr_mknodat(int dirfd, const char *path, mode_t mode, unsigned int major,
                   unsigned int minor) {
  return mknodat(dirfd, path, mode, makedev(major, minor));
}

int cxattr_btrfs_snapshot_create(int destination, int source, const char *name, int read_only) {
  struct btrfs_ioctl_vol_args_v2 args;
  memset(&args, 0, sizeof args);
  args.fd = source;
  args.flags = read_only ? BTRFS_SUBVOL_RDONLY : 0;
  if (strlen(name) >= sizeof args.name) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(args.name, name);
  return ioctl(destination, BTRFS_IOC_SNAP_CREATE_V2, &args);
}

int cxattr_btrfs_snapshot_destroy(int parent, const char *name) {
  struct btrfs_ioctl_vol_args args;
  memset(&args, 0, sizeof args);
  if (strlen(name) >= sizeof args.name) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(args.name, name);
  return ioctl(parent, BTRFS_IOC_SNAP_DESTROY, &args);
}

int cxattr_btrfs_subvolume_get_flags(int fd, unsigned long long *flags) {
  __u64 value = 0;
  int result = ioctl(fd, BTRFS_IOC_SUBVOL_GETFLAGS, &value);
  *flags = value;
  return result;
}

int cxattr_btrfs_subvolume_set_flags(int fd, const unsigned long long *flags) {
  __u64 value = *flags;
  return ioctl(fd, BTRFS_IOC_SUBVOL_SETFLAGS, &value);
}

int cxattr_btrfs_subvolume_children(int fd, unsigned long long *next,
                                    unsigned long long *treeids, unsigned long long *dirids,
                                    int *count) {
  struct btrfs_ioctl_get_subvol_rootref_args args;
  memset(&args, 0, sizeof args);
  args.min_treeid = *next;
  int result = ioctl(fd, BTRFS_IOC_GET_SUBVOL_ROOTREF, &args);
  // EOVERFLOW: the buffer is full and more follow (fs/btrfs/ioctl.c).
  if (result < 0 && errno != EOVERFLOW) return -1;
  *count = args.num_items;
  for (int index = 0; index < args.num_items; index++) {
    treeids[index] = args.rootref[index].treeid;
    dirids[index] = args.rootref[index].dirid;
  }
  *next = args.min_treeid;
  return result < 0 ? 1 : 0;
}

int cxattr_btrfs_subvolume_place(int fd, unsigned long long dirid, unsigned long long treeid,
                                 char *path) {
  struct btrfs_ioctl_ino_lookup_user_args args;
  memset(&args, 0, sizeof args);
  args.dirid = dirid;
  args.treeid = treeid;
  if (ioctl(fd, BTRFS_IOC_INO_LOOKUP_USER, &args) < 0) return -1;
  args.path[sizeof args.path - 1] = 0;
  args.name[sizeof args.name - 1] = 0;
  size_t directory = strlen(args.path), name = strlen(args.name);
  _Static_assert(sizeof args.path + sizeof args.name <= CXATTR_BTRFS_PLACE_MOST, "room");
  memcpy(path, args.path, directory);
  memcpy(path + directory, args.name, name + 1);
  return 0;
}

// The inode item's flag bit for nodump: BTRFS_INODE_NODUMP in the kernel's
// fs/btrfs/btrfs_inode.h, which is not a uapi header (chattr +d sets it:
// checked with `btrfs inspect-internal dump-tree`).
#define CXATTR_BTRFS_INODE_NODUMP (1ULL << 8)

// A megabyte a call: room for a call's items with their inline data.
#define CXATTR_BTRFS_SEARCH_BYTES (1 << 20)
// Items a call: a window of 64 inodes holds about 320 (five an inode on the
// 200,000-file tree), so most take one call; past that, the count is where
// a long run of one inode's items is cut, to be skipped.
#define CXATTR_BTRFS_SEARCH_ITEMS 512
_Static_assert(
    CXATTR_BTRFS_SEARCH_BYTES / sizeof(struct btrfs_ioctl_search_header) <= CXATTR_BTRFS_SEARCH_MOST,
    "a step's numbers fit the caller's room");

struct cxattr_btrfs_inode_search {
  __u64 objectid, offset, last;
  __u32 type;
  int done;
  struct btrfs_ioctl_search_args_v2 args; // followed by the buffer
};

struct cxattr_btrfs_inode_search *cxattr_btrfs_inode_search_new(void) {
  struct cxattr_btrfs_inode_search *search =
      calloc(1, sizeof *search + CXATTR_BTRFS_SEARCH_BYTES);
  // As Swift's own allocations do.
  if (!search) abort();
  search->done = 1;
  return search;
}

void cxattr_btrfs_inode_search_start(
    struct cxattr_btrfs_inode_search *search, unsigned long long first, unsigned long long last) {
  search->objectid = first;
  search->type = 0;
  search->offset = 0;
  search->last = last;
  search->done = 0;
}

void cxattr_btrfs_inode_search_free(struct cxattr_btrfs_inode_search *search) { free(search); }

long cxattr_btrfs_inode_search_step(
    int fd, struct cxattr_btrfs_inode_search *search, unsigned long long *inodes, int *done) {
  struct btrfs_ioctl_search_args_v2 *args = &search->args;
  *done = search->done;
  if (search->done) return 0;
  memset(&args->key, 0, sizeof args->key);
  args->key.tree_id = 0; // the subvolume `fd` is in
  args->key.min_objectid = search->objectid;
  args->key.min_type = search->type;
  args->key.min_offset = search->offset;
  args->key.max_objectid = search->last;
  args->key.max_type = UINT8_MAX;
  args->key.max_offset = UINT64_MAX;
  args->key.max_transid = UINT64_MAX;
  args->key.nr_items = CXATTR_BTRFS_SEARCH_ITEMS;
  args->buf_size = CXATTR_BTRFS_SEARCH_BYTES;
  if (ioctl(fd, BTRFS_IOC_TREE_SEARCH_V2, args) < 0) return -1;
  if (args->key.nr_items == 0) {
    search->done = *done = 1;
    return 0;
  }
  long count = 0;
  const char *item = (const char *)args->buf;
  const char *start = item;
  struct btrfs_ioctl_search_header header;
  for (__u32 i = 0; i < args->key.nr_items; i++) {
    memcpy(&header, item, sizeof header);
    const char *body = item + sizeof header;
    int wanted = header.type == BTRFS_XATTR_ITEM_KEY;
    if (header.type == BTRFS_INODE_ITEM_KEY && header.len >= sizeof(struct btrfs_inode_item)) {
      struct btrfs_inode_item inode;
      memcpy(&inode, body, sizeof inode);
      wanted = (le64toh(inode.flags) & CXATTR_BTRFS_INODE_NODUMP) != 0 ||
               S_ISCHR(le32toh(inode.mode));
    }
    // Keys come sorted, an inode's items together: once each in a call.
    if (wanted && (count == 0 || inodes[count - 1] != header.objectid))
      inodes[count++] = header.objectid;
    search->objectid = header.objectid;
    search->type = header.type;
    search->offset = header.offset;
    item = body + header.len;
  }
  // The kernel stops at the count asked for, or fills the buffer until the
  // next item would not fit, and an item is smaller than a tree block (at
  // most 64 KiB): short of the count, with that much room left, the range
  // has ended, and the call that would say so is spared (one a range: for
  // windows of 64 inode numbers, half the calls).
  if (args->key.nr_items < CXATTR_BTRFS_SEARCH_ITEMS &&
      (size_t)(item - start) + sizeof header + 65536 <= CXATTR_BTRFS_SEARCH_BYTES) {
    search->done = *done = 1;
    return count;
  }
  // An inode's items come in the order of their types, and past its
  // attributes (BTRFS_XATTR_ITEM_KEY) none says anything more here: a
  // directory's entries (BTRFS_DIR_ITEM_KEY, BTRFS_DIR_INDEX_KEY) and a
  // file's extents (BTRFS_EXTENT_DATA_KEY) are skipped for the next inode.
  // A window holding a directory of 189,000 files read 26 MB of its
  // entries, 25 calls of a megabyte, before this.
  if (search->type > BTRFS_XATTR_ITEM_KEY) {
    if (search->objectid >= search->last) {
      search->done = *done = 1;
    } else {
      search->objectid++;
      search->type = 0;
      search->offset = 0;
    }
    return count;
  }
  // The key after the last one read.
  if (search->offset < UINT64_MAX) {
    search->offset++;
  } else if (search->type < UINT8_MAX) {
    search->type++;
    search->offset = 0;
  } else if (search->objectid < UINT64_MAX) {
    search->objectid++;
    search->type = 0;
    search->offset = 0;
  } else {
    search->done = *done = 1;
  }
  return count;
}

int cxattr_btrfs_inode_search_allowed(int fd) {
  _Alignas(struct btrfs_ioctl_search_args_v2) char
      storage[sizeof(struct btrfs_ioctl_search_args_v2) + 512];
  struct btrfs_ioctl_search_args_v2 *args = (struct btrfs_ioctl_search_args_v2 *)storage;
  memset(&args->key, 0, sizeof args->key);
  args->key.min_objectid = BTRFS_FIRST_FREE_OBJECTID;
  args->key.max_objectid = BTRFS_FIRST_FREE_OBJECTID;
  args->key.max_type = UINT8_MAX;
  args->key.max_offset = UINT64_MAX;
  args->key.max_transid = UINT64_MAX;
  args->key.nr_items = 1;
  args->buf_size = 512;
  // An item larger than the buffer was found, so the search is allowed.
  if (ioctl(fd, BTRFS_IOC_TREE_SEARCH_V2, args) < 0 && errno != EOVERFLOW) return -1;
  return 0;
}

int cxattr_fork(void) { return (int)fork(); }

int cxattr_set_parent_death_signal(int signal) {
  return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}

int cxattr_wait_signal(const sigset_t *set, int *code) {
  siginfo_t info;
  int result = sigwaitinfo(set, &info);
  if (result > 0) *code = info.si_code;
  return result;
}

int cxattr_open_tree(int dirfd, const char *path, unsigned int flags) {
  return (int)syscall(__NR_open_tree, dirfd, path, flags);
}

// struct mount_attr from <linux/mount.h> (Linux 5.12).
struct cxattr_mount_attr {
  uint64_t attr_set;
  uint64_t attr_clr;
  uint64_t propagation;
  uint64_t userns_fd;
};

int cxattr_mount_setattr(int dirfd, const char *path, unsigned int flags, uint64_t set) {
  struct cxattr_mount_attr attr = {set, 0, 0, 0};
  return (int)syscall(__NR_mount_setattr, dirfd, path, flags, &attr, sizeof attr);
}

int cxattr_fanotify_init(unsigned int flags, unsigned int event_f_flags) {
  return fanotify_init(flags, event_f_flags);
}

int cxattr_fanotify_mark(int fanotify_fd, unsigned int flags, uint64_t mask, int dirfd,
                         const char *path) {
  return fanotify_mark(fanotify_fd, flags, mask, dirfd, path);
}

int cxattr_name_to_handle_at(int dirfd, const char *path, void *handle, int *mount_id,
                             int flags) {
  struct file_handle *file = handle;
  file->handle_bytes = CXATTR_MAX_HANDLE_SZ;
  return name_to_handle_at(dirfd, path, file, mount_id, flags);
}

int cxattr_btrfs_subvolume_identity(int fd, unsigned long long *treeid,
                                    unsigned long long *otransid) {
  struct btrfs_ioctl_get_subvol_info_args info;
  memset(&info, 0, sizeof info);
  if (ioctl(fd, BTRFS_IOC_GET_SUBVOL_INFO, &info) < 0) return -1;
  *treeid = info.treeid;
  *otransid = info.otransid;
  return 0;
}

int cxattr_btrfs_filesystem_id(int fd, unsigned char *fsid) {
  struct btrfs_ioctl_fs_info_args info;
  memset(&info, 0, sizeof info);
  if (ioctl(fd, BTRFS_IOC_FS_INFO, &info) < 0) return -1;
  memcpy(fsid, info.fsid, BTRFS_FSID_SIZE);
  return 0;
}
