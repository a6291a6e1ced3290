import Glibc
import ParserFuzzHarness

// Built two ways from this one file:
//  - by .ci/fuzz with -sanitize=fuzzer and -D FUZZING: libFuzzer brings its own main() and calls
//    LLVMFuzzerTestOneInput with each input it makes;
//  - by a plain `swift build`: a small program that runs the harness on the files named on its
//    command line, to replay a crash file under a debugger without the fuzzer.

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    ParserFuzzHarness.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// libFuzzer's driver, for a main() of our own (compiler-rt's FuzzerInterface.h).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt

/// SwiftPM links every Swift executable with `main` defined as `<module>_main` (the name its entry
/// point is compiled under, so tests can link the module), which displaces libFuzzer's own main():
/// this is that entry point, and it hands over to libFuzzer's driver.
@_cdecl("GPUEncodeFuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var count = argc
    var vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&count, &vector) { data, size in fuzz(data, size) }
}
#else
@main
struct Replay {
    static func main() {
        for path in CommandLine.arguments.dropFirst() {
            guard let f = fopen(path, "rb") else {
                fputs("GPUEncodeFuzz: cannot open \(path)\n", stderr)
                exit(66)
            }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = fread(&chunk, 1, chunk.count, f)
                bytes.append(contentsOf: chunk[0..<n])
                if n < chunk.count { break }
            }
            fclose(f)
            ParserFuzzHarness.run(bytes)
            print("\(path): ok")
        }
    }
}
#endif
