import Foundation
import XCTest

/// The library's targets form layers with one-way dependencies (docs/DESIGN.md, "Targets"). The
/// compiler already refuses a C module a target does not depend on (CFFmpeg in GPUEncodeRender has
/// no module map to find), but SwiftPM lets a Swift target import a Swift module it does not
/// declare when that module happens to be built first, so a dependency upwards or sideways could
/// slip in unnoticed. This reads every target's imports, and Package.swift's declared
/// dependencies, and holds both to the table below.
final class LayeringTests: XCTestCase {
    /// What each target of the package may import: the targets below it, the C modules it wraps.
    static let allowed: [String: Set<String>] = [
        "CSystemShim": [],
        "CShim": ["CFFmpeg", "CSystemShim"],
        "CCUDAGL": ["CFFmpeg"],
        "GPUEncodeCore": ["CSystemShim"],
        "GPUEncodeFilters": ["GPUEncodeCore"],
        "GPUEncodeSettings": ["GPUEncodeCore"],
        "GPUEncodePresets": ["GPUEncodeCore", "GPUEncodeFilters", "GPUEncodeSettings"],
        "GPUEncodeCPUKernels": [],
        "GPUEncodeRender": ["GPUEncodeCore", "GPUEncodeFilters", "GPUEncodeCPUKernels", "CEGL"],
        "GPUEncodeMedia": ["GPUEncodeCore", "GPUEncodeSettings", "CFFmpeg", "CShim"],
        "GPUEncodeKit": ["GPUEncodeCore", "GPUEncodeFilters", "GPUEncodeSettings", "GPUEncodePresets", "GPUEncodeRender",
                         "GPUEncodeMedia", "CFFmpeg", "CEGL", "CShim", "CCUDAGL"],
        "GPUEncodeBatch": ["GPUEncodeKit", "CSystemShim"],
    ]

    /// Modules of the package, as opposed to the system's (Glibc, Dispatch, Foundation).
    static let packageModules: Set<String> = Set(allowed.keys).union(["CFFmpeg", "CEGL", "gpuencode", "ParserFuzzHarness"])

    /// The layers that must never see FFmpeg or EGL, whatever the table says.
    static let noFFmpeg: Set<String> = ["GPUEncodeCore", "GPUEncodeFilters", "GPUEncodeSettings", "GPUEncodePresets", "GPUEncodeCPUKernels",
                                        "GPUEncodeRender"]
    static let noGL: Set<String> = ["GPUEncodeCore", "GPUEncodeFilters", "GPUEncodeSettings", "GPUEncodePresets", "GPUEncodeCPUKernels",
                                    "GPUEncodeMedia"]

    func testEachTargetImportsOnlyTheLayersBelowIt() throws {
        let sources = Paths.packageRoot.appendingPathComponent("Sources")
        var checked = 0
        for (target, allowed) in Self.allowed where target.hasPrefix("GPUEncode") {
            let dir = sources.appendingPathComponent(target)
            let files = try swiftFiles(in: dir)
            XCTAssertFalse(files.isEmpty, "no sources in \(dir.path)")
            for file in files {
                let text = try String(contentsOf: file, encoding: .utf8)
                for module in imports(in: text) where Self.packageModules.contains(module) {
                    checked += 1
                    let name = "\(target)/\(file.lastPathComponent)"
                    XCTAssertTrue(allowed.contains(module),
                                  "\(name) imports \(module), which \(target) may not use (allowed: \(allowed.sorted().joined(separator: ", ")))")
                    if Self.noFFmpeg.contains(target) {
                        XCTAssertFalse(["CFFmpeg", "CShim", "CCUDAGL", "GPUEncodeMedia", "GPUEncodeKit"].contains(module), "\(name) imports FFmpeg (\(module))")
                    }
                    if Self.noGL.contains(target) {
                        XCTAssertFalse(["CEGL", "GPUEncodeRender", "GPUEncodeKit"].contains(module), "\(name) imports EGL/GLES (\(module))")
                    }
                }
            }
        }
        XCTAssertGreaterThan(checked, 50, "too few imports found: is \(sources.path) the package's Sources?")
    }

    func testPackageManifestDeclaresTheSameLayers() throws {
        let manifest = try String(contentsOf: Paths.packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        for (target, allowed) in Self.allowed {
            guard let declared = dependencies(of: target, in: manifest) else {
                XCTFail("Package.swift has no target \(target)")
                continue
            }
            XCTAssertTrue(declared.isSubset(of: allowed),
                          "Package.swift: \(target) depends on \(declared.subtracting(allowed).sorted()), outside its layer")
        }
        // The fuzz harness links the parsing layers only: no FFmpeg, no GL in the fuzz build.
        let harness = try XCTUnwrap(dependencies(of: "ParserFuzzHarness", in: manifest))
        XCTAssertTrue(harness.isSubset(of: ["GPUEncodeCore", "GPUEncodeFilters", "GPUEncodePresets", "GPUEncodeSettings"]),
                      "ParserFuzzHarness depends on \(harness.sorted())")
    }

    private func swiftFiles(in dir: URL) throws -> [URL] {
        guard let e = FileManager.default.enumerator(at: dir, includingPropertiesForKeys: nil) else { return [] }
        return e.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
    }

    /// The modules a Swift file imports (`import X`, `@_exported import X`, `@testable import X`).
    private func imports(in text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            var words = line.split(separator: " ").map(String.init)
            while let first = words.first, first.hasPrefix("@") { words.removeFirst() }
            guard words.count >= 2, words[0] == "import" else { return nil }
            return words[words.count - 1].split(separator: ".").first.map(String.init)
        }
    }

    /// The target's `dependencies: [...]` in Package.swift, by name (string entries only).
    private func dependencies(of target: String, in manifest: String) -> Set<String>? {
        let pattern = try! NSRegularExpression(pattern: "\\.(?:target|executableTarget)\\(\\s*name: \"\(target)\"")
        guard let match = pattern.firstMatch(in: manifest, range: NSRange(manifest.startIndex..., in: manifest)),
              let found = Range(match.range, in: manifest) else { return nil }
        let rest = manifest[found.upperBound...]
        // The declaration ends at the first "),<newline>": a one-line target's, or a multi-line one's ")," line.
        let end = rest.range(of: "),\n")?.lowerBound ?? rest.endIndex
        let declaration = rest[..<end]
        guard let deps = declaration.range(of: "dependencies: [") else { return [] }
        let list = declaration[deps.upperBound...].prefix { $0 != "]" }
        return Set(list.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
    }
}
