#define _GNU_SOURCE
#include "CFanotify.h"

#include <fcntl.h>
#include <sys/fanotify.h>

int cfanotify_fanotify_init(unsigned int flags, unsigned int event_f_flags) {
  return fanotify_init(flags, event_f_flags);
}

int cfanotify_fanotify_mark(int fanotify_fd, unsigned int flags, uint64_t mask, int dirfd,
                         const char *path) {
  return fanotify_mark(fanotify_fd, flags, mask, dirfd, path);
}

int cfanotify_name_to_handle_at(int dirfd, const char *path, void *handle, int *mount_id,
                             int flags) {
  struct file_handle *file = handle;
  file->handle_bytes = CFANOTIFY_MAX_HANDLE_SZ;
  return name_to_handle_at(dirfd, path, file, mount_id, flags);
}
