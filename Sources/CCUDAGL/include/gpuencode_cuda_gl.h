#ifndef GPUENCODE_CUDA_GL_H
#define GPUENCODE_CUDA_GL_H
#include <stddef.h>

// CUDA-GL interop for NVDEC frames (FFmpeg's AV_PIX_FMT_CUDA): a frame's two planes (NV12, or
// P010/P016: luma, then interleaved CbCr) are copied on the GPU into two GL textures registered
// with CUDA, instead of being downloaded to system memory and uploaded again. libcuda is loaded at
// run time through ffnvcodec's loader, as FFmpeg loads it, so the program does not link against it
// and runs where there is no NVIDIA driver.
//
// Every call is made on the GL context's thread with the context current. Errors return NULL or
// -1 and write one line into `error` (`size` bytes).
typedef struct gpuencode_cuda_gl gpuencode_cuda_gl;

// `frame` (an AVFrame of AV_PIX_FMT_CUDA) names the CUDA context its planes live in. `luma` and
// `chroma` are GL textures (GL_R8 and GL_RG8, or GL_R16UI and GL_RG16UI) the size of the planes.
// Fails when libcuda cannot be loaded, when the current GL context is not on the frame's CUDA
// device (llvmpipe, another GPU), or when a texture cannot be registered.
gpuencode_cuda_gl *gpuencode_cuda_gl_open(const void *frame, unsigned luma, unsigned chroma, char *error, size_t size);

// Copies `frame`'s luma (`luma_bytes` x `luma_rows`) and CbCr (`chroma_bytes` x `chroma_rows`)
// into the textures. When it returns 0, GL commands issued afterwards see the new contents.
int gpuencode_cuda_gl_copy(gpuencode_cuda_gl *interop, const void *frame, size_t luma_bytes, size_t luma_rows,
                           size_t chroma_bytes, size_t chroma_rows, char *error, size_t size);

// Unregisters the textures and lets go of the frame's CUDA device. NULL is allowed.
void gpuencode_cuda_gl_close(gpuencode_cuda_gl *interop);
#endif
