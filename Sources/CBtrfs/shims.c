#define _GNU_SOURCE
#include "CBtrfs.h"

#include <endian.h>
#include <errno.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

int cbtrfs_snapshot_create(int destination, int source, const char *name, int read_only) {
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

int cbtrfs_snapshot_destroy(int parent, const char *name) {
  struct btrfs_ioctl_vol_args args;
  memset(&args, 0, sizeof args);
  if (strlen(name) >= sizeof args.name) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(args.name, name);
  return ioctl(parent, BTRFS_IOC_SNAP_DESTROY, &args);
}

int cbtrfs_subvolume_get_flags(int fd, unsigned long long *flags) {
  __u64 value = 0;
  int result = ioctl(fd, BTRFS_IOC_SUBVOL_GETFLAGS, &value);
  *flags = value;
  return result;
}

int cbtrfs_subvolume_set_flags(int fd, const unsigned long long *flags) {
  __u64 value = *flags;
  return ioctl(fd, BTRFS_IOC_SUBVOL_SETFLAGS, &value);
}

int cbtrfs_subvolume_children(int fd, unsigned long long *next,
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

int cbtrfs_subvolume_place(int fd, unsigned long long dirid, unsigned long long treeid,
                                 char *path) {
  struct btrfs_ioctl_ino_lookup_user_args args;
  memset(&args, 0, sizeof args);
  args.dirid = dirid;
  args.treeid = treeid;
  if (ioctl(fd, BTRFS_IOC_INO_LOOKUP_USER, &args) < 0) return -1;
  args.path[sizeof args.path - 1] = 0;
  args.name[sizeof args.name - 1] = 0;
  size_t directory = strlen(args.path), name = strlen(args.name);
  _Static_assert(sizeof args.path + sizeof args.name <= CBTRFS_PLACE_MOST, "room");
  memcpy(path, args.path, directory);
  memcpy(path + directory, args.name, name + 1);
  return 0;
}

// The inode item's flag bit for nodump: BTRFS_INODE_NODUMP in the kernel's
// fs/btrfs/btrfs_inode.h, which is not a uapi header (chattr +d sets it:
// checked with `btrfs inspect-internal dump-tree`).
#define CBTRFS_INODE_NODUMP (1ULL << 8)

// A megabyte a call: room for a call's items with their inline data.
#define CBTRFS_SEARCH_BYTES (1 << 20)
// Items a call: a window of 64 inodes holds about 320 (five an inode on the
// 200,000-file tree), so most take one call; past that, the count is where
// a long run of one inode's items is cut, to be skipped.
#define CBTRFS_SEARCH_ITEMS 512
_Static_assert(
    CBTRFS_SEARCH_BYTES / sizeof(struct btrfs_ioctl_search_header) <= CBTRFS_SEARCH_MOST,
    "a step's numbers fit the caller's room");

struct cbtrfs_inode_search {
  __u64 objectid, offset, last;
  __u32 type;
  int done;
  struct btrfs_ioctl_search_args_v2 args; // followed by the buffer
};

struct cbtrfs_inode_search *cbtrfs_inode_search_new(void) {
  struct cbtrfs_inode_search *search =
      calloc(1, sizeof *search + CBTRFS_SEARCH_BYTES);
  // As Swift's own allocations do.
  if (!search) abort();
  search->done = 1;
  return search;
}

void cbtrfs_inode_search_start(
    struct cbtrfs_inode_search *search, unsigned long long first, unsigned long long last) {
  search->objectid = first;
  search->type = 0;
  search->offset = 0;
  search->last = last;
  search->done = 0;
}

void cbtrfs_inode_search_free(struct cbtrfs_inode_search *search) { free(search); }

long cbtrfs_inode_search_step(
    int fd, struct cbtrfs_inode_search *search, unsigned long long *inodes, int *done) {
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
  args->key.nr_items = CBTRFS_SEARCH_ITEMS;
  args->buf_size = CBTRFS_SEARCH_BYTES;
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
      wanted = (le64toh(inode.flags) & CBTRFS_INODE_NODUMP) != 0 ||
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
  if (args->key.nr_items < CBTRFS_SEARCH_ITEMS &&
      (size_t)(item - start) + sizeof header + 65536 <= CBTRFS_SEARCH_BYTES) {
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

int cbtrfs_inode_search_allowed(int fd) {
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

int cbtrfs_subvolume_identity(int fd, unsigned long long *treeid,
                                    unsigned long long *otransid) {
  struct btrfs_ioctl_get_subvol_info_args info;
  memset(&info, 0, sizeof info);
  if (ioctl(fd, BTRFS_IOC_GET_SUBVOL_INFO, &info) < 0) return -1;
  *treeid = info.treeid;
  *otransid = info.otransid;
  return 0;
}

int cbtrfs_filesystem_id(int fd, unsigned char *fsid) {
  struct btrfs_ioctl_fs_info_args info;
  memset(&info, 0, sizeof info);
  if (ioctl(fd, BTRFS_IOC_FS_INFO, &info) < 0) return -1;
  memcpy(fsid, info.fsid, BTRFS_FSID_SIZE);
  return 0;
}
