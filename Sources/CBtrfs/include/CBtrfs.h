// The C boundary of skipbackup run --snapshot: btrfs's ioctls. linux/btrfs.h
// is included by this module's C file alone: its structures are all the C
// side needs.
#ifndef CBTRFS_H
#define CBTRFS_H

#include <stdint.h>

// ioctl(2) is variadic. The magic number is statfs(2)'s f_type of a btrfs filesystem;
// 256 is the inode of every subvolume's root directory (the kernel's
// BTRFS_FIRST_FREE_OBJECTID), which a snapshot must be taken of.
static const unsigned long CBTRFS_SUPER_MAGIC = 0x9123683E;
static const unsigned long long CBTRFS_SUBVOLUME_ROOT_INODE = 256;
static const unsigned long long CBTRFS_SUBVOL_RDONLY = 1ULL << 1;
// BTRFS_IOC_SNAP_CREATE_V2 on the directory `destination`: a snapshot of the
// subvolume whose root `source` is open, named `name`, read-only when asked.
int cbtrfs_snapshot_create(int destination, int source, const char *name, int read_only);
// BTRFS_IOC_SNAP_DESTROY on the directory `parent`: deletes its subvolume `name`.
int cbtrfs_snapshot_destroy(int parent, const char *name);
// BTRFS_IOC_SUBVOL_GETFLAGS and BTRFS_IOC_SUBVOL_SETFLAGS on a subvolume's
// root: its read-only flag, which must be cleared before an ordinary user may
// delete it (the kernel's permission check asks for write access to it).
int cbtrfs_subvolume_get_flags(int fd, unsigned long long *flags);
int cbtrfs_subvolume_set_flags(int fd, const unsigned long long *flags);
// BTRFS_IOC_GET_SUBVOL_ROOTREF (any user): the subvolumes made directly in
// the subvolume `fd` is in, by tree id from *next on: writes each one's tree
// id and the number of the directory that holds it (room for
// CBTRFS_CHILDREN_MOST each), sets *count and *next. Returns 1 when
// more follow (call again), 0 after the last, or -1 with errno.
#define CBTRFS_CHILDREN_MOST 255
int cbtrfs_subvolume_children(int fd, unsigned long long *next,
                                    unsigned long long *treeids, unsigned long long *dirids,
                                    int *count);
// BTRFS_IOC_INO_LOOKUP_USER (any user who may search each directory on the
// way): where the subvolume `treeid`, made in the directory `dirid`, is
// below the subvolume's root `fd`: that directory's path from it, "" or
// ending in "/", then the subvolume's name, NUL-terminated in `path` (room
// for CBTRFS_PLACE_MOST). 0, or -1 with errno.
#define CBTRFS_PLACE_MOST 4096
int cbtrfs_subvolume_place(int fd, unsigned long long dirid, unsigned long long treeid,
                                 char *path);
// BTRFS_IOC_TREE_SEARCH_V2 (CAP_SYS_ADMIN) over the tree of the subvolume
// `fd` is in, which reads its items without bringing an inode into memory,
// one call a step, over the objectids from `first` to `last` (set by
// cbtrfs_inode_search_start): the numbers of the inodes a judgement of
// marks must look at (one that holds an extended attribute, has the nodump
// flag, or is a character device), ascending, written to `inodes` (room for
// CBTRFS_SEARCH_MOST), a number possibly repeating the previous step's
// last. Returns how many, *done set after the last, or -1 with errno.
struct cbtrfs_inode_search;
#define CBTRFS_SEARCH_MOST 32768
// The search's state, with its megabyte of buffer, used for one range after
// another; stops the process when there is no memory for it, as Swift's own
// allocations do.
struct cbtrfs_inode_search *cbtrfs_inode_search_new(void);
void cbtrfs_inode_search_start(
    struct cbtrfs_inode_search *search, unsigned long long first, unsigned long long last);
void cbtrfs_inode_search_free(struct cbtrfs_inode_search *search);
// Whether the kernel allows the search on the subvolume `fd` is in: one
// search for one item of its root directory (inode 256). 0, or -1 with errno.
int cbtrfs_inode_search_allowed(int fd);
long cbtrfs_inode_search_step(
    int fd, struct cbtrfs_inode_search *search, unsigned long long *inodes, int *done);

// BTRFS_IOC_GET_SUBVOL_INFO (Linux 4.18, any user) on a descriptor of any
// item of a subvolume: which subvolume it is, as no path can tell (every
// subvolume's root is inode 256): its tree id (the subvolume ID) and the
// transaction that made it (otransid), which a subvolume made later under a
// reused ID does not share. The filesystem is BTRFS_IOC_FS_INFO's fsid,
// 16 bytes into `fsid`. 0, or -1 with errno.
int cbtrfs_subvolume_identity(int fd, unsigned long long *treeid,
                                    unsigned long long *otransid);
int cbtrfs_filesystem_id(int fd, unsigned char *fsid);

#endif
