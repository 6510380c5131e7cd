import BeaconCore
import BlueZ

/// `beaconwatch decode SOURCE`: every decoded advertisement as one JSON line.
public struct DecodeJob {
    public var source: SourceSpec
    public var skipBadLines = false

    public init(source: SourceSpec, skipBadLines: Bool = false) {
        self.source = source
        self.skipBadLines = skipBadLines
    }

    /// Runs the job, writing lines to `output` and warnings to `warn`; returns what was read.
    ///
    /// Throws ``InputError`` (status 2) or ``BluetoothUnavailable`` (status 3).
    public func run(output: (String) -> Void, warn: @escaping (String) -> Void) throws -> FileSource.Report {
        if case .adapter(let name) = source {
            try HCISocket.checkAvailable(adapter: name)
            throw LiveScanningNotBuilt(adapter: name)
        }
        let file = FileSource(spec: source, skipBadLines: skipBadLines, warn: warn)
        return try file.read { event in
            if case .advertisement(let time, let advertisement) = event {
                output(advertisement.jsonLine(at: time))
            }
        }
    }
}

/// Live scanning is not in this build yet; captures and traces are.
public struct LiveScanningNotBuilt: Error, CustomStringConvertible {
    public var adapter: String
    public init(adapter: String) { self.adapter = adapter }
    public var description: String {
        "live scanning on \(adapter) is not in this build yet; record with 'btmon -w capture.btsnoop' "
            + "and pass btsnoop:capture.btsnoop"
    }
}
