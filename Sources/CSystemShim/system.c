#include "gpuencode_system.h"
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <termios.h>

static volatile sig_atomic_t interrupt_signal = 0;

static void on_signal(int sig) {
    interrupt_signal = sig;
}

void gpuencode_install_signal_handlers(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* The handler only sets a flag, so a run stuck where the flag is never polled (a driver thread
       that never returns) would ignore Ctrl-C forever. SA_RESETHAND: a second SIGINT/SIGTERM/SIGHUP
       takes the default action and ends the process at once, as ffmpeg's repeated Ctrl-C does; a
       temporary it leaves is removed by the next run (stale-temporary cleanup). */
    struct sigaction once = sa;
    once.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &once, NULL);
    sigaction(SIGTERM, &once, NULL);
    sigaction(SIGHUP, &once, NULL);
    /* A closed terminal or dropped SSH session (SIGHUP), a closed pipe on stdout/stderr (SIGPIPE:
       the write fails with EPIPE instead) and RLIMIT_FSIZE (SIGXFSZ: the write fails with EFBIG)
       stop the run the same way, so the temporary is removed rather than left by the default action. */
    /* SIGPIPE and SIGXFSZ repeat with every failed write, so they keep the flag-only handler. */
    sigaction(SIGPIPE, &sa, NULL);
    sigaction(SIGXFSZ, &sa, NULL);
}

int gpuencode_interrupt_signal(void) { return interrupt_signal; }

int gpuencode_open_directory(const char *path) {
    /* The root of a contained write: the user's own path, links in it followed (once). */
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

int gpuencode_open_directory_below(int dirfd, const char *name) {
    /* O_NOFOLLOW: a link at `name` fails (ELOOP) instead of leading elsewhere; O_DIRECTORY: so does
       anything that is not a folder (ENOTDIR). */
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

int gpuencode_create_exclusive_at(int dirfd, const char *name) {
    /* O_EXCL refuses any existing name, a planted symlink included (O_NOFOLLOW says so twice);
       the mode is filtered by the umask like any new file's. */
    int fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    return fd >= 0 ? fd : -errno;
}

int gpuencode_rename_noreplace_at(int dirfd, const char *from, const char *to) {
    /* The raw system call: glibc declares renameat2 only under _GNU_SOURCE. */
    if (syscall(SYS_renameat2, dirfd, from, dirfd, to, RENAME_NOREPLACE) == 0) return 0;
    int e = errno;
    if (e != EINVAL && e != ENOSYS && e != ENOTSUP) return -e;
    /* Filesystems without RENAME_NOREPLACE: link(2) fails with EEXIST just as atomically. */
    if (linkat(dirfd, from, dirfd, to, 0) != 0) return -errno;
    if (unlinkat(dirfd, from, 0) != 0) return -errno;
    return 0;
}

int gpuencode_terminal_columns(int fd) {
    struct winsize ws;
    if (ioctl(fd, TIOCGWINSZ, &ws) != 0) return 0;
    return ws.ws_col;
}

int gpuencode_open_for_writing(const char *path, int create, int truncate) {
    int flags = O_WRONLY | O_NOFOLLOW | O_CLOEXEC;
    if (create) flags |= O_CREAT | O_EXCL;
    if (truncate) flags |= O_TRUNC;
    int fd = open(path, flags, 0666);
    return fd >= 0 ? fd : -errno;
}
