#include "gpuencode_shim.h"
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <stdio.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
#include <libavcodec/avcodec.h>

int gpuencode_averror_eof(void) { return AVERROR_EOF; }
int gpuencode_averror_eagain(void) { return AVERROR(EAGAIN); }
int gpuencode_averror(int posix_errno) { return AVERROR(posix_errno); }
int64_t gpuencode_nopts_value(void) { return AV_NOPTS_VALUE; }

void gpuencode_err2str(int errnum, char *buf, size_t size) {
    av_strerror(errnum, buf, size);
}

void gpuencode_log(void *avcl, int level, const char *message) {
    av_log(avcl, level, "%s", message);
}

void gpuencode_set_log_level(int level) {
    av_log_set_level(level);
}

static enum AVPixelFormat cuda_get_format(AVCodecContext *ctx, const enum AVPixelFormat *formats) {
    (void)ctx;
    for (const enum AVPixelFormat *p = formats; *p != AV_PIX_FMT_NONE; p++) {
        if (*p == AV_PIX_FMT_CUDA) return *p;
    }
    for (const enum AVPixelFormat *p = formats; *p != AV_PIX_FMT_NONE; p++) {
        const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(*p);
        if (desc && !(desc->flags & AV_PIX_FMT_FLAG_HWACCEL)) return *p;
    }
    return AV_PIX_FMT_NONE;
}

void gpuencode_use_cuda_get_format(void *codec_context) {
    ((AVCodecContext *)codec_context)->get_format = cuda_get_format;
}

// ---- Opening inputs as files only (reading side) ----
#include <libavformat/avformat.h>

// libavformat polls this during blocking I/O (a FIFO's open or read): a pending SIGINT/SIGTERM makes
// the call return AVERROR_EXIT instead of waiting on.
static int interrupt_requested(void *opaque) {
    (void)opaque;
    return gpuencode_interrupt_signal() != 0;
}

int gpuencode_open_input_file(void **format_context, const char *path) {
    AVFormatContext *ctx = avformat_alloc_context();
    if (!ctx) return AVERROR(ENOMEM);
    ctx->interrupt_callback.callback = interrupt_requested;
    ctx->interrupt_callback.opaque = NULL;
    // Only the file protocol, also for what the demuxer opens itself (HLS segments, concat
    // entries, image sequences): no network, no concat:/subfile:/pipe: tricks in a name.
    AVDictionary *options = NULL;
    av_dict_set(&options, "protocol_whitelist", "file", 0);
    size_t n = strlen(path);
    char *url = av_malloc(n + 6);
    if (!url) {
        avformat_free_context(ctx);
        av_dict_free(&options);
        return AVERROR(ENOMEM);
    }
    memcpy(url, "file:", 5);
    memcpy(url + 5, path, n + 1);
    int rc = avformat_open_input(&ctx, url, NULL, &options);
    av_free(url);
    av_dict_free(&options);
    *format_context = rc >= 0 ? ctx : NULL;
    return rc;
}

int gpuencode_averror_exit(void) { return AVERROR_EXIT; }

/* ---- Safe file writing (temporaries, no-replace rename, muxing onto our own fd) ---- */
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/fs.h>
#include <libavformat/avio.h>
#include <libavutil/mem.h>

static int fd_write(void *opaque, uint8_t *buf, int size) {
    int fd = (int)(intptr_t)opaque;
    int done = 0;
    while (done < size) {
        ssize_t n = write(fd, buf + done, (size_t)(size - done));
        if (n < 0) {
            if (errno == EINTR) continue;
            return AVERROR(errno);
        }
        done += (int)n;
    }
    return done;
}

static int fd_read(void *opaque, uint8_t *buf, int size) {
    int fd = (int)(intptr_t)opaque;
    for (;;) {
        ssize_t n = read(fd, buf, (size_t)size);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return AVERROR(errno);
        return n == 0 ? AVERROR_EOF : (int)n;
    }
}

static int64_t fd_seek(void *opaque, int64_t offset, int whence) {
    int fd = (int)(intptr_t)opaque;
    if (whence == AVSEEK_SIZE) {
        struct stat st;
        return fstat(fd, &st) == 0 ? (int64_t)st.st_size : AVERROR(errno);
    }
    off_t r = lseek(fd, (off_t)offset, whence & ~AVSEEK_FORCE);
    return r < 0 ? AVERROR(errno) : (int64_t)r;
}

void *gpuencode_avio_open_fd(int fd) {
    const int size = 65536;
    unsigned char *buffer = av_malloc(size);
    if (!buffer) return NULL;
    AVIOContext *pb = avio_alloc_context(buffer, size, 1, (void *)(intptr_t)fd, fd_read, fd_write, fd_seek);
    if (!pb) { av_free(buffer); return NULL; }
    pb->seekable = AVIO_SEEKABLE_NORMAL;
    return pb;
}

int gpuencode_avio_close_fd(void *context) {
    AVIOContext *pb = context;
    if (!pb) return 0;
    avio_flush(pb);
    int error = pb->error;
    av_freep(&pb->buffer);
    avio_context_free(&pb);
    return error;
}
