import CEGL
import Glibc
import GPUEncodeCore

/// Which EGL implementation to render with.
public enum GPUSelection: String, CaseIterable, Sendable {
    /// A hardware EGL device if there is one, else Mesa's software rasteriser.
    case auto
    /// Only a hardware EGL device (fails where there is none).
    case hardware
    /// Mesa's surfaceless platform (llvmpipe), the same everywhere.
    case software
}

/// A headless OpenGL ES 3 context: no window system, no display server.
public final class GLContext {
    public let display: EGLDisplay
    public let context: EGLContext
    private let pbuffer: EGLSurface?
    public let renderer: String
    public let version: String
    /// How the display was obtained, for `-v`.
    public let platform: String
    public let isSoftware: Bool
    public let selection: GPUSelection

    public init(selection: GPUSelection) throws {
        // Creation and destruction are serialised process-wide: one EGLDisplay is shared by every
        // context (batch jobs run several at once), and eglTerminate is not reference-counted, so
        // a context going away must not terminate the display between another's eglInitialize
        // and its eglMakeCurrent.
        GLContext.lifecycle.lock()
        defer { GLContext.lifecycle.unlock() }
        self.selection = selection
        var failures: [String] = []
        var chosen: (EGLDisplay, String)?
        if selection != .software {
            do { chosen = try GLContext.hardwareDisplay() } catch let e as GPUEncodeError { failures.append(e.message) }
        }
        if chosen == nil && selection != .hardware {
            do { chosen = try GLContext.surfacelessDisplay() } catch let e as GPUEncodeError { failures.append(e.message) }
        }
        guard let (display, platform) = chosen else {
            throw GPUEncodeError(.gpu, "no OpenGL ES 3 context (\(selection.rawValue)): " + failures.joined(separator: "; "))
        }
        self.display = display
        self.platform = platform

        guard eglBindAPI(EGLenum(EGL_OPENGL_ES_API)) == EGL_TRUE else {
            throw GPUEncodeError(.gpu, "eglBindAPI(OpenGL ES) failed: \(GLContext.eglErrorString())")
        }
        let configAttribs: [EGLint] = [
            EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT,
            EGL_SURFACE_TYPE, EGL_PBUFFER_BIT,
            EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_ALPHA_SIZE, 8,
            EGL_NONE,
        ]
        var config: EGLConfig?
        var count: EGLint = 0
        if eglChooseConfig(display, configAttribs, &config, 1, &count) != EGL_TRUE || count == 0 {
            // Surfaceless rendering needs no pbuffer-capable config; retry without that demand.
            let relaxed: [EGLint] = [EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT, EGL_NONE]
            guard eglChooseConfig(display, relaxed, &config, 1, &count) == EGL_TRUE, count > 0 else {
                throw GPUEncodeError(.gpu, "no EGL config with OpenGL ES 3 on \(platform): \(GLContext.eglErrorString())")
            }
        }
        let contextAttribs: [EGLint] = [EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 0, EGL_NONE]
        guard let ctx = eglCreateContext(display, config, nil, contextAttribs) else {
            throw GPUEncodeError(.gpu, "eglCreateContext(ES 3.0) failed on \(platform): \(GLContext.eglErrorString())")
        }
        context = ctx
        let extensions = eglQueryString(display, EGL_EXTENSIONS).map { String(cString: $0) } ?? ""
        if extensions.split(separator: " ").contains("EGL_KHR_surfaceless_context"),
           eglMakeCurrent(display, nil, nil, ctx) == EGL_TRUE {
            pbuffer = nil
        } else {
            let attribs: [EGLint] = [EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE]
            guard let surface = eglCreatePbufferSurface(display, config, attribs),
                  eglMakeCurrent(display, surface, surface, ctx) == EGL_TRUE else {
                throw GPUEncodeError(.gpu, "eglMakeCurrent failed on \(platform): \(GLContext.eglErrorString())")
            }
            pbuffer = surface
        }
        let rendererName = String(cString: glGetString(GLenum(GL_RENDERER)))
        renderer = rendererName
        version = String(cString: glGetString(GLenum(GL_VERSION)))
        isSoftware = ["llvmpipe", "softpipe", "swrast"].contains { rendererName.contains($0) }
        GLContext.live += 1
        counted = true
    }

    /// Whether a context made with `selection` would render in software (`isSoftware`), known
    /// without making one: plans made before the GPU thread makes its context (scale first) ask it.
    /// `.auto` falls back to software exactly where `init` does: no hardware EGL device initialises.
    public static func rendersInSoftware(_ selection: GPUSelection) -> Bool {
        switch selection {
        case .software: return true
        case .hardware: return false
        case .auto:
            lifecycle.lock()
            defer { lifecycle.unlock() }
            return (try? hardwareDisplay()) == nil
        }
    }

    /// Whether the current context lists GL extension `name`.
    static func hasExtension(_ name: String) -> Bool {
        var n: GLint = 0
        glGetIntegerv(GLenum(GL_NUM_EXTENSIONS), &n)
        return (0..<GLuint(max(n, 0))).contains { i in glGetStringi(GLenum(GL_EXTENSIONS), i).map { String(cString: $0) == name } ?? false }
    }

    /// The current context's GLES version, (major, minor).
    static var currentVersion: (Int, Int) {
        var version: (GLint, GLint) = (0, 0)
        glGetIntegerv(GLenum(GL_MAJOR_VERSION), &version.0)
        glGetIntegerv(GLenum(GL_MINOR_VERSION), &version.1)
        return (Int(version.0), Int(version.1))
    }

    deinit {
        eglMakeCurrent(display, nil, nil, nil)
        eglDestroyContext(display, context)
        if let pbuffer { eglDestroySurface(display, pbuffer) }
        // Only the last live context terminates the shared display (see init).
        guard counted else { return }
        GLContext.lifecycle.lock()
        defer { GLContext.lifecycle.unlock() }
        GLContext.live -= 1
        if GLContext.live == 0 { eglTerminate(display) }
    }

    /// EGL's own version and vendor, e.g. "1.5 (Mesa Project)", for `--version`: asked when wanted,
    /// not at every context a batch makes.
    public var eglVersion: String {
        let text = { (name: EGLint) in eglQueryString(self.display, name).map { String(cString: $0) } ?? "?" }
        return "\(text(EGL_VERSION)) (\(text(EGL_VENDOR)))"
    }

    /// Makes this context current on the calling thread (it must not be current on another).
    func makeCurrent() throws {
        guard eglMakeCurrent(display, pbuffer, pbuffer, context) == EGL_TRUE else {
            throw GPUEncodeError(.gpu, "eglMakeCurrent failed on \(platform): \(GLContext.eglErrorString())")
        }
    }

    /// Leaves it current on no thread, so another thread may take it.
    func releaseCurrent() {
        eglMakeCurrent(display, nil, nil, nil)
    }

    /// Contexts alive in this process, and whether this one is among them (a failed init is not).
    /// Guarded by `lifecycle`.
    nonisolated(unsafe) private static var live = 0
    private static let lifecycle = Mutex()
    private var counted = false

    static func eglErrorString() -> String {
        "EGL error 0x" + String(eglGetError(), radix: 16)
    }

    private static func initialize(_ display: EGLDisplay) -> Bool {
        var major: EGLint = 0, minor: EGLint = 0
        return eglInitialize(display, &major, &minor) == EGL_TRUE
    }

    /// A hardware device through EGL_EXT_platform_device, skipping Mesa's software device.
    private static func hardwareDisplay() throws -> (EGLDisplay, String) {
        let clientExtensions = eglQueryString(nil, EGL_EXTENSIONS).map { String(cString: $0) } ?? ""
        guard clientExtensions.contains("EGL_EXT_platform_device"),
              let queryDevicesPtr = eglGetProcAddress("eglQueryDevicesEXT"),
              let queryStringPtr = eglGetProcAddress("eglQueryDeviceStringEXT") else {
            throw GPUEncodeError(.gpu, "EGL_EXT_platform_device is not available")
        }
        let queryDevices = unsafeBitCast(queryDevicesPtr, to: PFNEGLQUERYDEVICESEXTPROC.self)
        let queryString = unsafeBitCast(queryStringPtr, to: PFNEGLQUERYDEVICESTRINGEXTPROC.self)
        var devices = [EGLDeviceEXT?](repeating: nil, count: 16)
        var count: EGLint = 0
        guard queryDevices(EGLint(devices.count), &devices, &count) == EGL_TRUE, count > 0 else {
            throw GPUEncodeError(.gpu, "no EGL devices")
        }
        for device in devices.prefix(Int(count)) {
            let ext = queryString(device, EGL_EXTENSIONS).map { String(cString: $0) } ?? ""
            if ext.contains("EGL_MESA_device_software") { continue }
            guard let display = eglGetPlatformDisplay(EGLenum(EGL_PLATFORM_DEVICE_EXT), device, nil) else { continue }
            if initialize(display) { return (display, "EGL device (hardware)") }
        }
        throw GPUEncodeError(.gpu, "no hardware EGL device (only Mesa's software device)")
    }

    /// Mesa's surfaceless platform: llvmpipe without any display server.
    private static func surfacelessDisplay() throws -> (EGLDisplay, String) {
        if let display = eglGetPlatformDisplay(EGLenum(EGL_PLATFORM_SURFACELESS_MESA), nil, nil), initialize(display) {
            return (display, "EGL surfaceless platform")
        }
        throw GPUEncodeError(.gpu, "the EGL surfaceless platform could not be initialised: \(eglErrorString())")
    }
}

/// How frames move between client memory and the GPU. The defaults suit the renderer found; the
/// fields are for measuring (bench/h100.sh: the command line reads GPUENCODE_TRANSFER and
/// GPUENCODE_COPY_THREADS into them).
public struct TransferOptions: Sendable, Equatable {
    public enum Mode: String, Sendable, CaseIterable {
        /// Pixel buffer objects on hardware GPUs, client memory on software renderers.
        case auto
        /// Pixel buffer objects (DMA through driver-owned memory).
        case pbo
        /// glTexSubImage2D and glReadPixels on client memory.
        case client
    }

    /// How pixel buffers are mapped for the CPU's copies (TransferBuffers.swift says more).
    public enum Mapping: String, Sendable, CaseIterable {
        /// Storage made and mapped once for good where GL_EXT_buffer_storage is listed, else per transfer.
        case auto
        /// Re-specified, mapped and unmapped for every transfer.
        case perTransfer = "mapped"
        /// Storage made and mapped once for good, fences for the GPU's progress.
        case persistent
    }

    public var mode: Mode
    /// Threads that copy into and out of mapped pixel buffers (1...16); nil: 8 on machines of 16
    /// cores or more, 4 on 8 or more, else 1.
    public var copyThreads: Int?
    public var mapping: Mapping
    /// Frames whose readback may be in flight at once with pixel buffers (2...4); nil: 3 (on the
    /// H100 the third raised the 1080p filter stage from about 2180 to 2370 fps).
    public var depth: Int?

    public init(mode: Mode = .auto, copyThreads: Int? = nil, mapping: Mapping = .auto, depth: Int? = nil, computePass: Bool? = nil) {
        self.computePass = computePass
        self.mode = mode
        self.copyThreads = copyThreads
        self.mapping = mapping
        self.depth = depth
    }

    /// Whether the single-pass (packed NV12) shader runs as a compute shader writing the frame
    /// straight into the read buffer; nil: on hardware GPUs. NVIDIA's data-centre GPUs run
    /// fragment shaders on a few of their units only (the H100 on 2 of its 66 TPCs): there the
    /// fragment pass took 0.36 ms at 1080p, and a compute dispatch spreads over every unit.
    public var computePass: Bool?

    /// Whether the packed pass runs as compute on `gl` (with pixel buffers: it writes into one).
    public func useComputePass(_ gl: GLContext) -> Bool {
        usePixelBuffers(gl) && (computePass ?? !gl.isSoftware)
    }

    /// These options with `auto` decided for `gl`: `mode` pbo or client, `computePass` true or false,
    /// as the renderer takes them.
    public func resolved(for gl: GLContext) -> TransferOptions {
        var r = self
        r.mode = usePixelBuffers(gl) ? .pbo : .client
        r.computePass = useComputePass(gl)
        return r
    }

    /// Frames in flight on the pipelined path.
    public var framesInFlight: Int { min(max(depth ?? 3, 2), 4) }

    /// Whether transfers go through pixel buffer objects on `gl`. On the H100 they raised the 1080p
    /// filter stage from about 610 to 1060 fps; on llvmpipe they only add a copy (7.0 → 8.6 ms), so
    /// `auto` keeps client memory on software renderers.
    public func usePixelBuffers(_ gl: GLContext) -> Bool {
        switch mode {
        case .pbo: return true
        case .client: return false
        case .auto: return !gl.isSoftware
        }
    }
}

/// Contexts kept between transcodes of one process (batch jobs): a job takes an idle one and makes
/// it current on its GPU thread, and gives it back when its renderer is gone. Creating and
/// destroying a context per job while others live grows the driver's memory (Mesa keeps JIT code
/// until the display terminates, which it cannot while other jobs run); reuse keeps the process
/// at one context per concurrent job, whatever the number of files.
package enum GLContextPool {
    private static let idle = Locked<[GLContext]>([])

    package static func take(_ selection: GPUSelection) throws -> GLContext {
        if let context = idle.withLock({ list -> GLContext? in
            guard let i = list.firstIndex(where: { $0.selection == selection }) else { return nil }
            return list.remove(at: i)
        }) {
            try context.makeCurrent()
            return context
        }
        return try GLContext(selection: selection)
    }

    package static func give(_ context: GLContext) {
        context.releaseCurrent()
        idle.withLock { $0.append(context) }
    }
}

/// A plain mutex for what `Locked` cannot wrap: the span of an initializer.
final class Mutex: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }
    func lock() { pthread_mutex_lock(&mutex) }
    func unlock() { pthread_mutex_unlock(&mutex) }
}
