// swift-tools-version:6.0
import PackageDescription

// .ci/fuzz sets GPUENCODE_FUZZ=1 (and a scratch path of its own) to build GPUEncodeFuzz with
// libFuzzer. The flags cannot come from `swift build -Xswiftc -sanitize=fuzzer` or `--sanitize
// fuzzer`: those reach every executable of the build, PresetEmbedder (run by the EmbedPresets
// plugin) too, which then links libFuzzer's main() and no longer builds or runs. Here they go to
// the code under test (instrumented) and to the fuzz program alone (linked with libFuzzer).
let fuzzing = Context.environment["GPUENCODE_FUZZ"] == "1"
let fuzzInstrumented: [SwiftSetting] = fuzzing ? [.unsafeFlags(["-sanitize=fuzzer,address"])] : []

let package = Package(
    name: "gpuencode",
    products: [
        .executable(name: "gpuencode", targets: ["gpuencode"]),
        .library(name: "GPUEncodeKit", targets: ["GPUEncodeKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // Debian: libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat libavcodec libavutil libswscale libswresample",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev", "libswresample-dev"])]
        ),
        // Debian: libegl-dev libgles-dev (libglvnd), with Mesa's libegl-mesa0 for llvmpipe
        .systemLibrary(
            name: "CEGL",
            pkgConfig: "egl glesv2",
            providers: [.apt(["libegl-dev", "libgles-dev", "libegl-mesa0"])]
        ),
        // What Swift cannot import from FFmpeg: function-like macros, variadics, signal flags.
        .target(name: "CShim", dependencies: ["CFFmpeg"]),
        .target(
            name: "GPUEncodeKit",
            dependencies: ["CFFmpeg", "CEGL", "CShim"],
            swiftSettings: fuzzInstrumented,
            plugins: ["EmbedPresets"]
        ),
        .executableTarget(
            name: "gpuencode",
            dependencies: [
                "GPUEncodeKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // lld: the static Foundation (pulled in by swift-argument-parser here, used directly by
            // PresetEmbedder) carries a GNU-linker warning about mktemp that says nothing about us.
            linkerSettings: [.unsafeFlags(["-use-ld=lld"])]
        ),
        // Turns presets/*.json into Swift source so `--preset sepia` works from any directory
        // and a static binary carries them without Foundation's Bundle.
        .executableTarget(
            name: "PresetEmbedder",
            path: "Sources/PresetEmbedder",
            linkerSettings: [.unsafeFlags(["-use-ld=lld"])]
        ),
        .plugin(name: "EmbedPresets", capability: .buildTool(), dependencies: ["PresetEmbedder"]),
        // The parsers that read untrusted files, run together on one input: by the fuzzer below
        // and by ParserFuzzRegressionTests, which replays every crash the fuzzer ever found.
        .target(name: "ParserFuzzHarness", dependencies: ["GPUEncodeKit"], path: "Fuzz/Harness", swiftSettings: fuzzInstrumented),
        // libFuzzer's entry point when fuzzing; otherwise a program that replays files through the
        // harness, so a plain `swift build` needs no sanitizer.
        .executableTarget(
            name: "GPUEncodeFuzz",
            dependencies: ["ParserFuzzHarness"],
            path: "Fuzz/Target",
            swiftSettings: fuzzing ? [.unsafeFlags(["-sanitize=fuzzer,address", "-parse-as-library"]), .define("FUZZING")] : [],
            linkerSettings: fuzzing ? [.unsafeFlags(["-sanitize=fuzzer,address"])] : []
        ),
        .testTarget(name: "GPUEncodeTests", dependencies: ["GPUEncodeKit", "ParserFuzzHarness"], path: "Tests/GPUEncodeTests"),
        // Each filter on the GPU against a CPU reference written in the tests (Double precision).
        .testTarget(name: "FilterTests", dependencies: ["GPUEncodeKit"], path: "Tests/FilterTests"),
    ],
    swiftLanguageModes: [.v5]
)
