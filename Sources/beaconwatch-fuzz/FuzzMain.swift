// The fuzzing binary. Built by `scripts/fuzz` with `-sanitize=fuzzer` and `-D FUZZING`, it hands
// itself to libFuzzer with the target named by BEACONWATCH_FUZZ_TARGET; built plainly, it runs a
// target over files: `beaconwatch-fuzz TARGET FILE...` (what the fuzzer found, replayed without
// libFuzzer).
import FuzzTargets
import Syscalls

#if canImport(Glibc)
    import Glibc
#endif
#if FUZZING
    import CFuzzerDriver
#endif

@main
enum FuzzMain {
    static func main() {
        #if FUZZING
            let name = getenv("BEACONWATCH_FUZZ_TARGET").map { String(cString: $0) } ?? ""
            guard let target = FuzzTarget(rawValue: name) else {
                complain("beaconwatch-fuzz: set BEACONWATCH_FUZZ_TARGET to one of \(names(", "))")
                exit(2)
            }
            selected = target
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(
                LLVMFuzzerRunDriver(&argc, &argv) { data, size in
                    FuzzMain.selected.run(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
                    return 0
                })
        #else
            runFiles()
        #endif
    }

    /// The target of a libFuzzer run (its callback is a C function: it captures nothing).
    nonisolated(unsafe) static var selected = FuzzTarget.hci

    /// `beaconwatch-fuzz TARGET FILE...`: each file through the target, `FILE: ok` after each.
    static func runFiles() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
            complain("usage: beaconwatch-fuzz \(names("|")) FILE...; or fuzz with scripts/fuzz TARGET")
            exit(2)
        }
        for path in arguments.dropFirst() {
            guard case .success(let bytes) = Document.read(path, limit: 1 << 30) else {
                complain("beaconwatch-fuzz: \(path): cannot read; check the path")
                exit(2)
            }
            target.run(bytes)
            print("\(path): ok")
        }
    }

    static func names(_ separator: String) -> String {
        FuzzTarget.allCases.map(\.rawValue).joined(separator: separator)
    }

    /// One line on standard error.
    static func complain(_ text: String) {
        let line = Array((text + "\n").utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}
