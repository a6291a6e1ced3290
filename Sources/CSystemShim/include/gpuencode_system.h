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
#endif
