#include "gpuencode_cuda_gl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ffnvcodec's loader prints to stderr when libcuda is missing; the caller reports instead.
#define FFNV_LOG_FUNC(logctx, msg, ...) ((void)(logctx))
#define FFNV_DEBUG_LOG_FUNC(logctx, msg, ...) ((void)(logctx))
#include <ffnvcodec/dynlink_loader.h>
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_cuda.h>

// GL's texture target, without pulling GL headers into a CUDA wrapper.
#define GPUENCODE_GL_TEXTURE_2D 0x0DE1

struct gpuencode_cuda_gl {
    CudaFunctions *cu;
    // A reference to the frames' device: the CUDA context stays alive while textures are registered.
    AVBufferRef *device;
    CUcontext context;
    CUgraphicsResource resources[2];
    int registered;
};

static const AVCUDADeviceContext *cuda_device(const AVFrame *frame) {
    if (!frame->hw_frames_ctx) return NULL;
    const AVHWFramesContext *frames = (const AVHWFramesContext *)frame->hw_frames_ctx->data;
    if (frames->device_ctx->type != AV_HWDEVICE_TYPE_CUDA) return NULL;
    return frames->device_ctx->hwctx;
}

// Writes "what: CUDA_ERROR_NAME" into `error`; returns -1.
static int fail(const gpuencode_cuda_gl *interop, CUresult rc, const char *what, char *error, size_t size) {
    const char *name = NULL;
    if (interop && interop->cu && interop->cu->cuGetErrorName(rc, &name) != CUDA_SUCCESS) name = NULL;
    snprintf(error, size, "%s: %s (%d)", what, name ? name : "CUDA error", (int)rc);
    return -1;
}

gpuencode_cuda_gl *gpuencode_cuda_gl_open(const void *opaque, unsigned luma, unsigned chroma, char *error, size_t size) {
    const AVFrame *frame = opaque;
    const AVCUDADeviceContext *hw = cuda_device(frame);
    if (!hw) {
        snprintf(error, size, "the frame is not in CUDA memory");
        return NULL;
    }
    gpuencode_cuda_gl *interop = calloc(1, sizeof *interop);
    if (!interop) {
        snprintf(error, size, "out of memory");
        return NULL;
    }
    if (cuda_load_functions(&interop->cu, NULL) < 0) {
        snprintf(error, size, "cannot load libcuda.so.1");
        free(interop);
        return NULL;
    }
    const AVHWFramesContext *frames = (const AVHWFramesContext *)frame->hw_frames_ctx->data;
    interop->device = av_buffer_ref(frames->device_ref);
    interop->context = hw->cuda_ctx;
    CudaFunctions *cu = interop->cu;
    CUresult rc = cu->cuCtxPushCurrent(interop->context);
    if (rc != CUDA_SUCCESS) {
        fail(interop, rc, "cuCtxPushCurrent", error, size);
        gpuencode_cuda_gl_close(interop);
        return NULL;
    }
    // The GL context must be on the CUDA device the frames are on (not llvmpipe, not another GPU).
    CUdevice device = 0, gl[8];
    unsigned count = 0;
    rc = cu->cuCtxGetDevice(&device);
    if (rc == CUDA_SUCCESS) rc = cu->cuGLGetDevices(&count, gl, 8, CU_GL_DEVICE_LIST_ALL);
    int same = 0;
    for (unsigned i = 0; rc == CUDA_SUCCESS && i < count && i < 8; i++) same |= gl[i] == device;
    if (rc != CUDA_SUCCESS) {
        fail(interop, rc, "the GL context is on no CUDA device (cuGLGetDevices)", error, size);
    } else if (!same) {
        snprintf(error, size, "the GL context is not on the CUDA device NVDEC decodes on");
        rc = CUDA_ERROR_UNKNOWN;
    } else {
        unsigned textures[2] = {luma, chroma};
        for (int i = 0; i < 2 && rc == CUDA_SUCCESS; i++) {
            // Each copy overwrites the whole texture: CUDA need not keep what was there.
            rc = cu->cuGraphicsGLRegisterImage(&interop->resources[i], textures[i], GPUENCODE_GL_TEXTURE_2D,
                                               CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD);
            if (rc == CUDA_SUCCESS) interop->registered = i + 1;
            else fail(interop, rc, "cuGraphicsGLRegisterImage", error, size);
        }
    }
    CUcontext popped;
    cu->cuCtxPopCurrent(&popped);
    if (rc != CUDA_SUCCESS) {
        gpuencode_cuda_gl_close(interop);
        return NULL;
    }
    return interop;
}

int gpuencode_cuda_gl_copy(gpuencode_cuda_gl *interop, const void *opaque, size_t luma_bytes, size_t luma_rows,
                           size_t chroma_bytes, size_t chroma_rows, char *error, size_t size) {
    const AVFrame *frame = opaque;
    const AVCUDADeviceContext *hw = cuda_device(frame);
    if (!hw || hw->cuda_ctx != interop->context) {
        snprintf(error, size, "the frame is not in the CUDA context the textures were registered with");
        return -1;
    }
    CudaFunctions *cu = interop->cu;
    CUresult rc = cu->cuCtxPushCurrent(interop->context);
    if (rc != CUDA_SUCCESS) return fail(interop, rc, "cuCtxPushCurrent", error, size);
    // Mapping waits for GL work that uses the textures; unmapping makes the copies visible to GL
    // commands issued after it. FFmpeg's copy out of the decoder ran on the context's stream
    // (`hw->stream`), so the copies here, on the same stream, come after it.
    rc = cu->cuGraphicsMapResources(2, interop->resources, hw->stream);
    const char *what = "cuGraphicsMapResources";
    if (rc == CUDA_SUCCESS) {
        size_t bytes[2] = {luma_bytes, chroma_bytes}, rows[2] = {luma_rows, chroma_rows};
        for (int i = 0; i < 2 && rc == CUDA_SUCCESS; i++) {
            CUarray array;
            what = "cuGraphicsSubResourceGetMappedArray";
            rc = cu->cuGraphicsSubResourceGetMappedArray(&array, interop->resources[i], 0, 0);
            if (rc != CUDA_SUCCESS) break;
            CUDA_MEMCPY2D copy;
            memset(&copy, 0, sizeof copy);
            copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
            copy.srcDevice = (CUdeviceptr)frame->data[i];
            copy.srcPitch = (size_t)frame->linesize[i];
            copy.dstMemoryType = CU_MEMORYTYPE_ARRAY;
            copy.dstArray = array;
            copy.WidthInBytes = bytes[i];
            copy.Height = rows[i];
            what = "cuMemcpy2DAsync";
            rc = cu->cuMemcpy2DAsync(&copy, hw->stream);
        }
        CUresult unmapped = cu->cuGraphicsUnmapResources(2, interop->resources, hw->stream);
        if (rc == CUDA_SUCCESS && unmapped != CUDA_SUCCESS) {
            rc = unmapped;
            what = "cuGraphicsUnmapResources";
        }
    }
    CUcontext popped;
    cu->cuCtxPopCurrent(&popped);
    return rc == CUDA_SUCCESS ? 0 : fail(interop, rc, what, error, size);
}

void gpuencode_cuda_gl_close(gpuencode_cuda_gl *interop) {
    if (!interop) return;
    if (interop->registered > 0 && interop->cu->cuCtxPushCurrent(interop->context) == CUDA_SUCCESS) {
        for (int i = 0; i < interop->registered; i++) interop->cu->cuGraphicsUnregisterResource(interop->resources[i]);
        CUcontext popped;
        interop->cu->cuCtxPopCurrent(&popped);
    }
    cuda_free_functions(&interop->cu);
    av_buffer_unref(&interop->device);
    free(interop);
}
