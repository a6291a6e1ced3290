import ArgumentParser
import GPUEncodeKit
import Glibc

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check preset files without touching any video.",
        usage: "gpuencode validate <files> ... [--json] [--passes] [<options>]",
        discussion: """
        Reports every error it can find, not only the first: each with the file, line:column, the \
        JSON path and what was expected (with a suggestion for a misspelt filter or parameter), one \
        per line as FILE:LINE:COLUMN: error: PATH: MESSAGE. Custom shaders are compiled on the GPU \
        and their errors carry the shader's own line numbers. The chain is cut into passes against \
        this GPU's limits (uniform storage, samplers) exactly as a run does, so a preset that \
        validates runs here; --passes prints the render graph after each compiler pass. Without a GPU context a note says the \
        limits were not checked (a file with custom shaders, which must be compiled, then fails \
        with 69). Warnings (a value equal to its default, an unused graph node or id) do not fail.

        EXIT: 0 when no file has errors (warnings alone are fine), 67 otherwise.

        EXAMPLES:
          gpuencode validate my-look.json
          gpuencode validate presets/*.json --json
        """
    )

    @Argument(help: "Preset files.")
    var files: [String]

    @Flag(help: "Print a JSON report: an array of {file, valid, errors, warnings}, each entry with file, line, column, path, message, severity.")
    var json = false

    @Flag(help: "Print each preset's render graph after every compiler pass, on a nominal 1080p source and this GPU: the conversions inserted, how it executes, which filters are fused into which shader and what each needs.")
    var passes = false

    @OptionGroup var gpuOptions: GPUOptions

    @OptionGroup(title: "Files presets may read") var readAccess: AllowPathOptions

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give one or more preset files") }
    }

    func run() throws {
        var context: GLContext? = nil
        let allowed: AllowedPaths
        do { allowed = try readAccess.allowed() } catch let error as GPUEncodeError {
            fputs("gpuencode: error: \(error.description)\n", stderr)
            throw ExitCode(error.exitCode)
        }
        var reports: [(file: String, errors: [PresetDiagnostic], warnings: [PresetDiagnostic])] = []
        var noContext: GPUEncodeError? = nil
        for file in files {
            let check = Preset.checkFile(file, allowed: allowed)
            var errors = check.errors
            if let preset = check.preset, !preset.filters.isEmpty {
                if context == nil && noContext == nil {
                    do { context = try GLContext(selection: try gpuOptions.selection()) } catch let error as GPUEncodeError {
                        noContext = error
                    }
                }
                if let noContext {
                    // Custom shaders cannot be checked without a GPU; the limits of a chain of
                    // built-in filters only matter to a run, which needs a GPU anyway.
                    if !preset.shaderDefinitions.isEmpty {
                        fputs("gpuencode: error: \(file): cannot compile its shaders: \(noContext.description)\n", stderr)
                        throw ExitCode(noContext.exitCode)
                    }
                    fputs("gpuencode: note: \(file): no GPU context (\(noContext.message)); pass limits not checked\n", stderr)
                } else {
                    errors += PresetShaderCheck.compileErrors(preset)
                    if errors.isEmpty {
                        let plan = PresetPassCheck.check(preset, limits: GPULimits.current())
                        errors += plan.errors
                        if passes && !json {
                            for line in PresetPassCheck.trace(preset, limits: GPULimits.current()) { print("\(file): \(line)") }
                        }
                    }
                }
            }
            reports.append((file, errors, check.warnings))
        }
        _ = context
        if json {
            func entry(_ d: PresetDiagnostic) -> JSONValue {
                .object([("file", .string(d.file)), ("line", .number(d.line)), ("column", .number(d.column)),
                         ("path", .string(d.path)), ("message", .string(d.message)), ("severity", .string(d.severity.rawValue))])
            }
            let list = reports.map { r -> JSONValue in
                .object([("file", .string(r.file)), ("valid", .bool(r.errors.isEmpty)),
                         ("errors", .array(r.errors.map(entry))), ("warnings", .array(r.warnings.map(entry)))])
            }
            print(JSONWriter.write(.array(list)), terminator: "")
        } else {
            for r in reports {
                for d in r.errors + r.warnings {
                    let position = d.line > 0 ? "\(d.line):\(d.column):" : ""
                    print("\(d.file):\(position) \(d.severity.rawValue): \(d.path.isEmpty ? "" : d.path + ": ")\(d.message)")
                }
                if r.errors.isEmpty && r.warnings.isEmpty { print("\(r.file): ok") }
            }
            let errorCount = reports.map(\.errors.count).reduce(0, +), warningCount = reports.map(\.warnings.count).reduce(0, +)
            let bad = reports.filter { !$0.errors.isEmpty }.count
            fputs("gpuencode: \(reports.count) file\(reports.count == 1 ? "" : "s") checked: \(errorCount) error\(errorCount == 1 ? "" : "s") in \(bad) file\(bad == 1 ? "" : "s"), \(warningCount) warning\(warningCount == 1 ? "" : "s")\n", stderr)
        }
        if reports.contains(where: { !$0.errors.isEmpty }) { throw ExitCode(67) }
    }
}
