// The C boundary of skipbackup run's watch of each ROOT: fanotify(7) and the
// directory handles its events name, from name_to_handle_at(2).
#ifndef CFANOTIFY_H
#define CFANOTIFY_H

#include <stdint.h>

// skipbackup run watches each ROOT while its view is made (fanotify(7)):
// the events of a directory's entries and attributes, each naming its
// directory by file handle and the entry by name (FAN_REPORT_DFID_NAME,
// Linux 5.9), for a whole filesystem as root (FAN_MARK_FILESYSTEM) or for
// each directory walked (inode marks, which an ordinary user may make from
// Linux 5.13). The handles of the walked directories come from
// name_to_handle_at(2) with AT_HANDLE_FID (Linux 6.5, CLinux's), fanotify's own
// encoding. glibc declares name_to_handle_at and struct file_handle only
// under _GNU_SOURCE, so all three calls go through the shims.
static const unsigned int CFANOTIFY_FAN_CLOEXEC = 0x1;
static const unsigned int CFANOTIFY_FAN_NONBLOCK = 0x2;
static const unsigned int CFANOTIFY_FAN_UNLIMITED_QUEUE = 0x10;
static const unsigned int CFANOTIFY_FAN_UNLIMITED_MARKS = 0x20;
static const unsigned int CFANOTIFY_FAN_REPORT_DFID_NAME = 0x400 | 0x800;
static const unsigned int CFANOTIFY_FAN_MARK_ADD = 0x1;
static const unsigned int CFANOTIFY_FAN_MARK_DONT_FOLLOW = 0x4;
static const unsigned int CFANOTIFY_FAN_MARK_ONLYDIR = 0x8;
static const unsigned int CFANOTIFY_FAN_MARK_FILESYSTEM = 0x100;
static const unsigned int CFANOTIFY_FAN_MARK_FLUSH = 0x80;
static const uint64_t CFANOTIFY_FAN_ATTRIB = 0x4;
static const uint64_t CFANOTIFY_FAN_MOVED_FROM = 0x40;
static const uint64_t CFANOTIFY_FAN_MOVED_TO = 0x80;
static const uint64_t CFANOTIFY_FAN_CREATE = 0x100;
static const uint64_t CFANOTIFY_FAN_DELETE = 0x200;
static const uint64_t CFANOTIFY_FAN_Q_OVERFLOW = 0x4000;
static const uint64_t CFANOTIFY_FAN_EVENT_ON_CHILD = 0x08000000;
static const uint64_t CFANOTIFY_FAN_ONDIR = 0x40000000;
static const unsigned char CFANOTIFY_FAN_EVENT_INFO_TYPE_DFID_NAME = 2;
static const unsigned char CFANOTIFY_FANOTIFY_METADATA_VERSION = 3;
// MAX_HANDLE_SZ of <fcntl.h>: the longest handle a filesystem encodes.
static const unsigned int CFANOTIFY_MAX_HANDLE_SZ = 128;
int cfanotify_fanotify_init(unsigned int flags, unsigned int event_f_flags);
int cfanotify_fanotify_mark(int fanotify_fd, unsigned int flags, uint64_t mask, int dirfd,
                         const char *path);
// name_to_handle_at(2) into `handle`, which holds struct file_handle and
// CFANOTIFY_MAX_HANDLE_SZ bytes after it (handle_bytes is set here).
int cfanotify_name_to_handle_at(int dirfd, const char *path, void *handle, int *mount_id,
                             int flags);

#endif
