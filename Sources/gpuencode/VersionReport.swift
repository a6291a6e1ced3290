import GPUEncodeKit

/// `gpuencode --version`: the release and commit, then the FFmpeg libraries and the OpenGL ES and
/// EGL this machine gives it, so a bug report says in one paste what ran. A machine without a usable
/// GPU still gets the first two lines and the reason on the third.
func versionReport() -> String {
    var lines = ["gpuencode \(GPUEncodeVersion.string) (commit \(BuildStamp.commit), \(BuildStamp.commitDate))"]
    lines.append("FFmpeg \(FFmpegVersion.release): " + FFmpegVersion.libraries.map { "\($0.name) \($0.version)" }.joined(separator: ", "))
    do {
        let gl = try GLContext(selection: try resolveGPU(nil))
        lines.append("OpenGL: \(gl.version); renderer \(gl.renderer); EGL \(gl.eglVersion) via \(gl.platform)")
    } catch let error as GPUEncodeError {
        lines.append("OpenGL: none (\(error.message))")
    } catch {
        lines.append("OpenGL: none (\(error))")
    }
    return lines.joined(separator: "\n")
}
