// What a custom shader may ask of the GLSL compiler. A driver compiles what it is given, however
// big: a million-element local array took llvmpipe minutes and more than 6 GB, and a compile cannot
// be interrupted. So the source is bounded before any compile, by reading it: every shader these
// bounds accept compiles in well under a second on llvmpipe (docs/presets.md, "Custom shaders").
// The preset reader applies them, so `gpuencode validate` and a run refuse the same shaders.

/// Static bounds on a custom shader's source: its length, the elements its arrays declare, and
/// how far its macros and functions expand (the compiler expands both in full: a macro or a
/// function used twice by the next one, thirty deep, is a billion copies).
public enum ShaderBounds {
    /// Bytes of GLSL: hand-written shaders are a few KiB; GPUImage's largest is under 8 KiB.
    public static let maxSourceBytes = 64 << 10
    /// Scalar elements of every array the shader declares, together (globals, locals, function
    /// parameters, struct members; a vec4 counts 4, a mat4 16): a 64x64 kernel of floats fits.
    public static let maxArrayElements = 4096
    /// Tokens after macro expansion.
    public static let maxExpandedTokens = 200_000
    /// Tokens of `main` with every function it calls copied in, as the compiler inlines them.
    public static let maxInlinedTokens = 200_000
    /// Brackets open at once (parentheses, braces, square brackets): the compile grows with the
    /// square of the depth (5000 nested parentheses took llvmpipe 14 s; 256 take 0.6 s).
    public static let maxNesting = 256

    /// The first problem with `source`, with its line in the source as written; nil when it is within bounds.
    public static func problem(in source: String) -> (line: Int, message: String)? {
        let bytes = source.utf8.count
        if bytes > maxSourceBytes {
            return (1, "the source is \(bytes) bytes; a custom shader has at most \(maxSourceBytes) (64 KiB)")
        }
        do {
            let tokens = try GLSLMacros.expand(GLSLTokens.scan(source))
            try GLSLTokens.checkNesting(tokens)
            let functions = try GLSLCalls.check(tokens)
            try GLSLArrays.check(tokens, copies: functions.copies(at:))
            return nil
        } catch let e as ShaderBoundError {
            return (e.line, e.message)
        } catch {
            return (1, "\(error)")
        }
    }
}

struct ShaderBoundError: Error {
    let line: Int
    let message: String
}
