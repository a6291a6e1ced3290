#ifndef GPUENCODE_SYSTEM_H
#define GPUENCODE_SYSTEM_H
// Plain POSIX/Linux calls Swift cannot make directly or safely, with no FFmpeg in sight, so the
// lowest Swift layer (GPUEncodeCore) can use them. The FFmpeg shims are in CShim.

// SIGINT/SIGTERM/SIGHUP/SIGPIPE/SIGXFSZ set a flag that the transcode loop polls; the handler does nothing else.
void gpuencode_install_signal_handlers(void);
int gpuencode_interrupt_signal(void);

// ---- Safe file writing: temporaries, no-replace rename ----
// Contained writes: a folder held by its descriptor, files made and renamed relative to it.
// open(path, O_RDONLY|O_DIRECTORY|O_CLOEXEC): the fd, or -errno. Follows links in `path`.
int gpuencode_open_directory(const char *path);
// openat(dirfd, name, O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC): the fd, or -errno (-ELOOP for a
// symbolic link, -ENOTDIR for anything else that is not a folder).
int gpuencode_open_directory_below(int dirfd, const char *name);
// openat(dirfd, name, O_RDWR|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0666): the fd, or -errno. Never
// follows or reuses an existing name.
int gpuencode_create_exclusive_at(int dirfd, const char *name);
// renameat within `dirfd` that fails with -EEXIST instead of replacing `to` (renameat2
// RENAME_NOREPLACE; linkat+unlinkat where the filesystem lacks it). 0 or -errno.
int gpuencode_rename_noreplace_at(int dirfd, const char *from, const char *to);

// ---- Progress ----
// The width in columns of the terminal on `fd` (TIOCGWINSZ), or 0 when it is none or does not say.
int gpuencode_terminal_columns(int fd);
// open(path, O_WRONLY|O_NOFOLLOW|O_CLOEXEC [|O_CREAT|O_EXCL, 0666] [|O_TRUNC]): the fd, or -errno.
// `create` makes a new file and never reuses a name; otherwise the file must exist.
int gpuencode_open_for_writing(const char *path, int create, int truncate);
#endif
