#ifndef GPUENCODE_SHIM_H
#define GPUENCODE_SHIM_H
#include <stdint.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>

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

// SIGINT/SIGTERM set a flag that the transcode loop polls; the handler does nothing else.
void gpuencode_install_signal_handlers(void);
int gpuencode_interrupt_signal(void);

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
#endif
