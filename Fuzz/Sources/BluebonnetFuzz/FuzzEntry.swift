import Foundation

/// libFuzzer's driver, from its runtime: parses libFuzzer's flags and calls `callback` with each input.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// Runs the target `BLUEBONNET_FUZZ_TARGET` names on one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    FuzzTarget.selected.run(data)
    return 0
}

/// The executable's entry point. SwiftPM renames an executable's `main` (so tests can link it), which keeps
/// libFuzzer's own `main` out: the driver is started from here instead.
@main
enum FuzzMain {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput))
    }
}
