#ifndef GPUENCODE_SYSTEM_H
#define GPUENCODE_SYSTEM_H
// Plain POSIX/Linux calls Swift cannot make directly or safely, with no FFmpeg in sight, so the
// lowest Swift layer (GPUEncodeCore) can use them. The FFmpeg shims are in CShim.

// SIGINT/SIGTERM/SIGHUP/SIGPIPE/SIGXFSZ set a flag that the transcode loop polls; the handler does nothing else.
void gpuencode_install_signal_handlers(void);
int gpuencode_interrupt_signal(void);

// ---- Safe file writing (issue 10) ----
// open(O_RDWR|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0666): the fd, or -errno. Never follows or reuses
// an existing name.
int gpuencode_create_exclusive(const char *path);
// rename that fails with -EEXIST instead of replacing `to` (renameat2 RENAME_NOREPLACE; link+unlink
// where the filesystem lacks it). 0 or -errno.
int gpuencode_rename_noreplace(const char *from, const char *to);

// ---- Progress (issue 14) ----
// The width in columns of the terminal on `fd` (TIOCGWINSZ), or 0 when it is none or does not say.
int gpuencode_terminal_columns(int fd);
// open(path, O_WRONLY|O_NOFOLLOW|O_CLOEXEC [|O_CREAT|O_EXCL, 0666] [|O_TRUNC]): the fd, or -errno.
// `create` makes a new file and never reuses a name; otherwise the file must exist.
int gpuencode_open_for_writing(const char *path, int create, int truncate);

// ---- Memory (issue 15) ----
// Drops from this process's page tables the resident pages of its executable file mappings
// (r-xp) whose path contains `path_part` and that hold no private (written) page: the pages stay
// in the page cache and fault back in, unchanged, on the next use. Returns the bytes of RSS
// dropped, or -errno when /proc/self/smaps cannot be read.
long long gpuencode_drop_code_pages(const char *path_part);
#endif
