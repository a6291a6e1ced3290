// swift-tools-version:6.0
import PackageDescription

// .ci/fuzz sets GPUENCODE_FUZZ=1 (and a scratch path of its own) to build GPUEncodeFuzz with
// libFuzzer. The flags cannot come from `swift build -Xswiftc -sanitize=fuzzer` or `--sanitize
// fuzzer`: those reach every executable of the build, PresetEmbedder (run by the EmbedPresets
// plugin) too, which then links libFuzzer's main() and no longer builds or runs. Here they go to
// the code under test (instrumented) and to the fuzz program alone (linked with libFuzzer).
let fuzzing = Context.environment["GPUENCODE_FUZZ"] == "1"
let fuzzInstrumented: [SwiftSetting] = fuzzing ? [.unsafeFlags(["-sanitize=fuzzer,address"])] : []

// The CPU kernels' instruction set: Haswell's (AVX2, FMA) on x86-64; elsewhere the default.
#if arch(x86_64)
let vectorKernels: [SwiftSetting] = [.unsafeFlags(["-target-cpu", "haswell", "-O"])]
#else
let vectorKernels: [SwiftSetting] = [.unsafeFlags(["-O"])]
#endif

let package = Package(
    name: "gpuencode",
    products: [
        .executable(name: "gpuencode", targets: ["gpuencode"]),
        .library(name: "GPUEncodeKit", targets: ["GPUEncodeKit", "GPUEncodeBatch"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // `gpuencode studio`'s local web server.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
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
        // Plain POSIX calls for GPUEncodeCore (signal flag, exclusive create, no-replace rename): no FFmpeg.
        .target(name: "CSystemShim"),
        // What Swift cannot import from FFmpeg: function-like macros, variadics, the AVIOContext on
        // our own descriptor. Its header includes CSystemShim's, so `import CShim` sees both.
        .target(name: "CShim", dependencies: ["CFFmpeg", "CSystemShim"]),
        // CUDA-GL interop for NVDEC frames: libcuda loaded at run time through ffnvcodec's loader
        // (Debian: libffmpeg-nvenc-dev, headers only), as FFmpeg loads it.
        .target(name: "CCUDAGL", dependencies: ["CFFmpeg"]),

        // The library, in layers; each depends only on the ones below it (docs/DESIGN.md, "Targets").
        // Errors, files read and written safely, queues, progress, JSON: no FFmpeg, no GL.
        // The version comes from VERSION (StampBuild).
        .target(name: "GPUEncodeCore", dependencies: ["CSystemShim"], swiftSettings: fuzzInstrumented, plugins: ["StampBuild"]),
        // Filter declarations (GLSL beside typed parameters), .cube/.acv parsers. Pictures and movies
        // that filters read are decoded through `FilterMedia`, which the pipeline layer provides.
        .target(name: "GPUEncodeFilters", dependencies: ["GPUEncodeCore"], swiftSettings: fuzzInstrumented),
        // Encoder settings as declared (crf, presets, rules): what presets, batch manifests and the
        // CLI check; opening an encoder with them is the pipeline's.
        .target(name: "GPUEncodeSettings", dependencies: ["GPUEncodeCore"], swiftSettings: fuzzInstrumented),
        // Presets: JSON with line:column errors, the model, migration, the schema, the library.
        .target(
            name: "GPUEncodePresets",
            dependencies: ["GPUEncodeCore", "GPUEncodeFilters", "GPUEncodeSettings"],
            swiftSettings: fuzzInstrumented,
            plugins: ["EmbedPresets"]
        ),
        // Pixel kernels on the CPU, for plans a software renderer runs faster without GL: plain
        // Swift over 8-lane vectors, compiled for AVX2 and FMA on x86-64 (GPUEncodeRender calls
        // them only where CPUFeatures finds those), so nothing else needs them.
        .target(name: "GPUEncodeCPUKernels", swiftSettings: vectorKernels),
        // EGL context, shaders, the chain and frame renderers: EGL/GLES only, no FFmpeg.
        .target(name: "GPUEncodeRender", dependencies: ["GPUEncodeCore", "GPUEncodeFilters", "GPUEncodeCPUKernels", "CEGL"]),
        // FFmpeg I/O: owning AVFrame/AVPacket, the video source (demux, decode, NVDEC, working
        // format), the output file, the video encoder, audio re-encoding, metadata, stills (PNG/JPEG).
        // Settings gives it what to encode with; it knows nothing of GL, filters or presets.
        .target(name: "GPUEncodeMedia", dependencies: ["GPUEncodeCore", "GPUEncodeSettings", "CFFmpeg", "CShim"]),
        // The pipeline: inputs and outputs, the transcoder, preview, contact sheet, benchmark. It
        // re-exports the layers below, so `import GPUEncodeKit` is all a library user needs.
        .target(
            name: "GPUEncodeKit",
            dependencies: ["GPUEncodeCore", "GPUEncodeFilters", "GPUEncodeSettings", "GPUEncodePresets", "GPUEncodeRender",
                           "GPUEncodeMedia", "CFFmpeg", "CEGL", "CShim", "CCUDAGL"]
        ),
        // Many files in parallel: plans, manifests, state, reports.
        .target(name: "GPUEncodeBatch", dependencies: ["GPUEncodeKit", "CSystemShim"]),
        // `gpuencode studio`: the preset studio's web server on 127.0.0.1 (Hummingbird), its one
        // page (studio.html, embedded) and the GL thread that renders for it.
        .target(
            name: "GPUEncodeStudio",
            dependencies: ["GPUEncodeCore", "GPUEncodeKit", .product(name: "Hummingbird", package: "hummingbird"),
                           .product(name: "NIOCore", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
                           .product(name: "HTTPTypes", package: "swift-http-types")],
            resources: [.embedInCode("studio.html")]
        ),
        .executableTarget(
            name: "gpuencode",
            dependencies: [
                "GPUEncodeKit",
                "GPUEncodeBatch",
                "GPUEncodeStudio",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // lld: the static Foundation (pulled in by swift-argument-parser here, used directly by
            // PresetEmbedder) carries a GNU-linker warning about mktemp that says nothing about us.
            linkerSettings: [.unsafeFlags(["-use-ld=lld"])],
            // The commit it was built from, for --version (StampBuild).
            plugins: ["StampBuild"]
        ),
        // Turns presets/*.json into Swift source so `--preset sepia` works from any directory
        // and a static binary carries them without Foundation's Bundle.
        .executableTarget(
            name: "PresetEmbedder",
            path: "Sources/PresetEmbedder",
            linkerSettings: [.unsafeFlags(["-use-ld=lld"])]
        ),
        .plugin(name: "EmbedPresets", capability: .buildTool(), dependencies: ["PresetEmbedder"]),
        // VERSION into GPUEncodeCore, the git commit into the tool (Plugins/StampBuild/stamp.sh).
        .plugin(name: "StampBuild", capability: .buildTool()),
        // The parsers that read untrusted files, run together on one input: by the fuzzer below
        // and by ParserFuzzRegressionTests, which replays every crash the fuzzer ever found.
        // It needs the parsing layers only (no FFmpeg, no GL), so the fuzz build links neither.
        .target(
            name: "ParserFuzzHarness",
            dependencies: ["GPUEncodeCore", "GPUEncodeFilters", "GPUEncodePresets"],
            path: "Fuzz/Harness",
            swiftSettings: fuzzInstrumented
        ),
        // libFuzzer's entry point when fuzzing; otherwise a program that replays files through the
        // harness, so a plain `swift build` needs no sanitizer.
        .executableTarget(
            name: "GPUEncodeFuzz",
            dependencies: ["ParserFuzzHarness"],
            path: "Fuzz/Target",
            swiftSettings: fuzzing ? [.unsafeFlags(["-sanitize=fuzzer,address", "-parse-as-library"]), .define("FUZZING")] : [],
            linkerSettings: fuzzing ? [.unsafeFlags(["-sanitize=fuzzer,address"])] : []
        ),
        .testTarget(name: "GPUEncodeTests", dependencies: ["GPUEncodeKit", "GPUEncodeBatch", "ParserFuzzHarness"], path: "Tests/GPUEncodeTests"),
        // Each filter on the GPU against a CPU reference written in the tests (Double precision).
        .testTarget(name: "FilterTests", dependencies: ["GPUEncodeKit"], path: "Tests/FilterTests"),
    ],
    swiftLanguageModes: [.v5]
)
