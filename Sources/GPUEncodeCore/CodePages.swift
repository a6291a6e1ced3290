import CSystemShim

/// Code pages a process no longer runs (issue 15). llvmpipe compiles shaders with LLVM once, on
/// the first frames, then runs the compiled code: the 45-50 MiB of libLLVM's code that compiling
/// touched would stay resident for the whole transcode and count in its peak RSS. Dropping them
/// from the process's page tables costs nothing if they are not needed again (they stay in the page
/// cache) and a page fault each if they are (a shader compiled later).
package enum CodePages {
    /// Drops the resident, unmodified pages of the executable mappings of files whose path contains
    /// `pathPart`; returns the bytes of RSS dropped (0 when /proc cannot be read).
    @discardableResult
    package static func drop(pathContaining pathPart: String) -> Int {
        max(0, Int(gpuencode_drop_code_pages(pathPart)))
    }
}
