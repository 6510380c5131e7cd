import BeaconCore
import Configuration
import RegionMonitor

/// `beaconwatch replay CONFIG SOURCE`: a deterministic run on the virtual clock, outputs as JSON
/// lines; at the end of input the clock runs on until no deadline is pending.
public struct ReplayJob {
    public var configuration: Configuration
    public var source: SourceSpec
    public var skipBadLines = false

    public init(configuration: Configuration, source: SourceSpec, skipBadLines: Bool = false) {
        self.configuration = configuration
        self.source = source
        self.skipBadLines = skipBadLines
    }

    /// Replays the source through a fresh engine, handing each output to `output`.
    ///
    /// Throws ``InputError`` for unreadable input (status 2).
    @discardableResult
    public func run(
        restored: [String: Proximity] = [:],
        output: (MonitorOutput) throws -> Void,
        warn: @escaping (String) -> Void
    ) throws -> FileSource.Report {
        if case .adapter(let name) = source {
            throw InputError(file: name, message: "replay reads files; give btsnoop:PATH or trace:PATH (or use 'run')")
        }
        var engine = Engine(
            configuration: configuration,
            identity: .resolve(configuration.monitor),
            restored: restored
        )
        var outputs: [MonitorOutput] = []
        let file = FileSource(spec: source, skipBadLines: skipBadLines, warn: warn)
        let report = try file.read { event in
            engine.handle(event, into: &outputs)
            for item in outputs { try output(item) }
            outputs.removeAll(keepingCapacity: true)
        }
        engine.drain(into: &outputs)
        for item in outputs { try output(item) }
        return report
    }
}
