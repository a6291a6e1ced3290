#ifndef GPUENCODE_SHIM_H
#define GPUENCODE_SHIM_H
#include <stdint.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
// The POSIX shims (signal flag, exclusive create, no-replace rename), re-exported so `import CShim`
// still sees them.
#include "gpuencode_system.h"

// Function-like macros and compound literals that Swift cannot import.
int gpuencode_averror_eof(void);
int gpuencode_averror_eagain(void);
int gpuencode_averror(int posix_errno);
int64_t gpuencode_nopts_value(void);
// av_err2str is a macro over a compound-literal buffer; this writes into the caller's buffer.
void gpuencode_err2str(int errnum, char *buf, size_t size);
// av_log is variadic.
void gpuencode_log(void *avcl, int level, const char *message);
// Routes libav* log lines at or above `level` to stderr with a prefix; below it they are dropped.
void gpuencode_set_log_level(int level);

// Decoding through FFmpeg's cuda hwaccel (NVDEC): installs a get_format callback (a C function
// pointer) on the AVCodecContext that picks AV_PIX_FMT_CUDA when the decoder offers it, and the first
// software format otherwise (a profile NVDEC cannot decode falls back to software decoding).
void gpuencode_use_cuda_get_format(void *codec_context);

// ---- Opening inputs as files only (reading side) ----
// avformat_open_input on "file:" + path with protocol_whitelist=file and an interrupt callback that
// reports a pending SIGINT/SIGTERM (so opening or reading a FIFO stops on a signal). On success
// *format_context is the AVFormatContext (void * keeps libavformat out of this header); on failure
// it is NULL and the AVERROR is returned.
int gpuencode_open_input_file(void **format_context, const char *path);
int gpuencode_averror_exit(void);

// ---- Safe file writing: temporaries, no-replace rename ----
// An AVIOContext (returned as void*) that writes, seeks and reads on `fd`, which stays the caller's
// to close; the muxer then never opens the output by name for writing.
void *gpuencode_avio_open_fd(int fd);
// Flushes and frees a context from gpuencode_avio_open_fd; returns its first write error (0 if none).
int gpuencode_avio_close_fd(void *context);
#endif
