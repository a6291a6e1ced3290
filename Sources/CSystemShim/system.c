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
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

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

int gpuencode_create_exclusive(const char *path) {
    /* O_EXCL refuses any existing name, a planted symlink included (O_NOFOLLOW says so twice);
       the mode is filtered by the umask like any new file's. */
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    return fd >= 0 ? fd : -errno;
}

int gpuencode_rename_noreplace(const char *from, const char *to) {
    /* The raw system call: glibc declares renameat2 only under _GNU_SOURCE. */
    if (syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
    int e = errno;
    if (e != EINVAL && e != ENOSYS && e != ENOTSUP) return -e;
    /* Filesystems without RENAME_NOREPLACE: link(2) fails with EEXIST just as atomically. */
    if (link(from, to) != 0) return -errno;
    if (unlink(from) != 0) return -errno;
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

/* Issue 15. Only clean, private, executable file mappings are touched: MADV_DONTNEED on a private
   mapping throws away its private copies, and a code mapping has none (Private_Dirty 0, checked),
   so the next access maps the file's page again and reads the same bytes. */
long long gpuencode_drop_code_pages(const char *path_part) {
    FILE *f = fopen("/proc/self/smaps", "re");
    if (!f) return -errno;
    enum { MAX = 64 };
    unsigned long start[MAX], end[MAX];
    long long rss[MAX];
    int count = 0, current = -1;
    long long current_rss = 0;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8];
        int path_at = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms, &path_at) == 3 && path_at > 0) {
            current = -1;
            if (count < MAX && strcmp(perms, "r-xp") == 0 && strstr(line + path_at, path_part)) {
                current = count;
                start[count] = lo;
                end[count] = hi;
                rss[count] = 0;
                count++;
            }
            continue;
        }
        if (current < 0) continue;
        long long kb;
        if (sscanf(line, "Rss: %lld kB", &kb) == 1) current_rss = kb;
        else if (sscanf(line, "Private_Dirty: %lld kB", &kb) == 1) {
            if (kb == 0) rss[current] = current_rss * 1024;
            else { count--; }  /* written pages: leave this mapping alone */
            current = -1;
        }
    }
    fclose(f);
    long long dropped = 0;
    for (int i = 0; i < count; i++)
        if (rss[i] > 0 && madvise((void *)start[i], end[i] - start[i], MADV_DONTNEED) == 0) dropped += rss[i];
    return dropped;
}
