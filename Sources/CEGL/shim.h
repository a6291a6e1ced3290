// EGL_EGLEXT_PROTOTYPES stays undefined: libglvnd exports only core EGL, so extension
// entry points are loaded with eglGetProcAddress.
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl32.h>
#include <GLES2/gl2ext.h>
