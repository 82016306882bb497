// The C boundary of the Linux calls and flags glibc declares only under
// _GNU_SOURCE (which Swift's Glibc module does not define) or as variadic
// functions Swift cannot call. Every shim says why it exists.
#ifndef CLINUX_H
#define CLINUX_H

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/stat.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <unistd.h>

// The AT_ flags of the *at calls (the *xattrat calls, fstatat, linkat,
// unlinkat, open_tree, name_to_handle_at), for Swift, which cannot see the
// macros.
#define CLINUX_AT_FDCWD AT_FDCWD
#define CLINUX_AT_SYMLINK_NOFOLLOW AT_SYMLINK_NOFOLLOW
// AT_EMPTY_PATH is declared only under _GNU_SOURCE; this is its Linux value.
#define CLINUX_AT_EMPTY_PATH 0x1000

// O_TMPFILE likewise needs _GNU_SOURCE; glibc defines its parts unconditionally.
static const int CLINUX_O_TMPFILE = __O_TMPFILE;
// O_PATH too: an open that reads nothing, for fstatfs(2) on any item (the
// filesystem that explains an EPERM).
static const int CLINUX_O_PATH = __O_PATH;
// open_tree(2)'s whole tree of mounts below the one named (<linux/fcntl.h>).
static const unsigned int CLINUX_AT_RECURSIVE = 0x8000;
// name_to_handle_at(2)'s handle that identifies and cannot open (Linux 6.5),
// fanotify's own encoding.
static const int CLINUX_AT_HANDLE_FID = 0x200;
static const int CLINUX_AT_SYMLINK_FOLLOW = 0x400;

// getdents64(2): glibc declares it only under _GNU_SOURCE, which Swift's
// Glibc module does not define.
ssize_t clinux_getdents64(int fd, void *buffer, size_t size);

// pipe2(2) likewise: a pipe closed on exec from the start, for the child
// processes sweep's gitignore rule runs.
int clinux_pipe2(int fds[2], int flags);

// statx(2) likewise needs _GNU_SOURCE; the walk reads the nodump attribute
// from it without opening the file.
int clinux_statx(int dirfd, const char *path, int flags, unsigned int mask,
                 struct statx *buffer);

// ioctl(2) is variadic. FS_IOC_GETFLAGS and FS_IOC_SETFLAGS read and write
// an int, whatever the macros' declared type says.
int clinux_get_inode_flags(int fd, int *flags);
int clinux_set_inode_flags(int fd, const int *flags);

// open(2) and openat(2) are variadic; the mode is only read with O_CREAT or
// O_TMPFILE.
int clinux_openat(int dirfd, const char *path, int flags, mode_t mode);

// openat2(2) (Linux 5.6): an open whose resolution the kernel restricts
// (RESOLVE_NO_SYMLINKS refuses a symbolic link anywhere on the way, not
// only at the end as O_NOFOLLOW does). glibc 2.36 has no wrapper and no
// struct open_how in the headers Swift sees. -1 with ENOSYS before 5.6.
static const unsigned long long CLINUX_RESOLVE_NO_XDEV = 0x01;
static const unsigned long long CLINUX_RESOLVE_NO_MAGICLINKS = 0x02;
static const unsigned long long CLINUX_RESOLVE_NO_SYMLINKS = 0x04;
static const unsigned long long CLINUX_RESOLVE_BENEATH = 0x08;
static const unsigned long long CLINUX_RESOLVE_IN_ROOT = 0x10;
int clinux_openat2(int dirfd, const char *path, unsigned long long flags, unsigned long long mode,
                   unsigned long long resolve);

// renameat2(2) and its flags: glibc declares them only under _GNU_SOURCE.
static const unsigned int CLINUX_RENAME_NOREPLACE = 1;
static const unsigned int CLINUX_RENAME_EXCHANGE = 2;
static const unsigned int CLINUX_RENAME_WHITEOUT = 4;
int clinux_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
                     unsigned int flags);

// fcntl(2) is variadic: F_DUPFD_CLOEXEC, a duplicate closed on exec at once.
int clinux_dup_cloexec(int fd);

// The open(2) flags Swift's Glibc module does not show (they need
// _GNU_SOURCE), by their Linux values.
static const int CLINUX_O_NOATIME = 01000000;
// AT_REMOVEDIR and AT_NO_AUTOMOUNT, for unlinkat(2) and the *at lookups.
static const int CLINUX_AT_REMOVEDIR = 0x200;
static const int CLINUX_AT_NO_AUTOMOUNT = 0x800;

// mknodat(2) with a device number: makedev is a macro.
int clinux_mknodat(int dirfd, const char *path, mode_t mode, unsigned int major,
                   unsigned int minor);

// COMMAND as a child that skipbackup waits for (run --snapshot deletes the
// snapshot after it): fork(2), a signal to the child, the parent-death
// signal (prctl(2) is variadic), and sigwaitinfo(2) with the sender's code
// (siginfo_t's si_code is behind a union Swift cannot name).
int clinux_fork(void);
int clinux_set_parent_death_signal(int signal);
int clinux_wait_signal(const sigset_t *set, int *code);

#endif
