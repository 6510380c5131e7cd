import CoreMetrics
import Metrics
import Prometheus
import RegionMonitor
import Synchronization

/// The daemon's metrics (docs/behaviour.md §16, `/metrics`) through swift-metrics, kept in a Prometheus
/// registry of this daemon's own (never the process-wide bootstrap: tests run many daemons in
/// one process).
///
/// Outputs and the event latency are counted as they are delivered; the rest is read from the
/// engine, the broker connection and the script runner when the page is scraped.
package final class WebMetrics: Sendable {
    package let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let reports: CoreMetrics.Counter
    private let sightings: CoreMetrics.Counter
    private let outputs: [String: CoreMetrics.Counter]
    private let outbox: CoreMetrics.Gauge
    private let connected: CoreMetrics.Gauge
    private let scripts: CoreMetrics.Gauge
    private let devices: CoreMetrics.Gauge
    private let inside: [String: CoreMetrics.Gauge]
    private let slowClients: CoreMetrics.Counter
    private let latency: CoreMetrics.Timer
    /// The totals already counted, to count only what was added since.
    private let counted = Mutex((reports: 0, sightings: 0, slow: 0))
    /// Placed scanners by state (docs/behaviour.md §19).
    private let scannerStates: [String: CoreMetrics.Gauge]
    /// Reports per scanner, made as scanners are first read, with the total already counted.
    private let scannerReports = Mutex<[String: (counter: CoreMetrics.Counter, counted: Int)]>([:])
    /// Per region with an occupancy (docs/behaviour.md §23): its occupants and whether it is
    /// occupied, made as regions are first announced.
    private let occupancy = Mutex<[Region: (occupants: CoreMetrics.Gauge, occupied: CoreMetrics.Gauge)]>([:])
    /// `beaconwatch_cluster_active`, made when the daemon is first asked its role.
    private let cluster = Mutex<CoreMetrics.Gauge?>(nil)

    static let outputTypes = [
        "monitoring", "enter", "exit", "location", "rule", "server", "notification", "alert", "nearest", "occupancy",
    ]

    package init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        // From a tenth of a millisecond (a step committed in a batch) to seconds (a slow disk).
        factory.defaultDurationHistogramBuckets = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2),
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5),
        ]
        self.factory = factory
        reports = CoreMetrics.Counter(label: "beaconwatch_decoded_reports_total", factory: factory)
        sightings = CoreMetrics.Counter(label: "beaconwatch_sightings_total", factory: factory)
        var outputs: [String: CoreMetrics.Counter] = [:]
        for type in Self.outputTypes {
            outputs[type] = CoreMetrics.Counter(
                label: "beaconwatch_outputs_total", dimensions: [("type", type)], factory: factory)
        }
        self.outputs = outputs
        outbox = CoreMetrics.Gauge(label: "beaconwatch_outbox_depth", factory: factory)
        connected = CoreMetrics.Gauge(label: "beaconwatch_broker_connected", factory: factory)
        scripts = CoreMetrics.Gauge(label: "beaconwatch_script_queue_depth", factory: factory)
        devices = CoreMetrics.Gauge(label: "beaconwatch_devices", factory: factory)
        var inside: [String: CoreMetrics.Gauge] = [:]
        for kind in ["area", "zone", "beacon"] {
            inside[kind] = CoreMetrics.Gauge(
                label: "beaconwatch_regions_inside", dimensions: [("kind", kind)], factory: factory)
        }
        self.inside = inside
        slowClients = CoreMetrics.Counter(label: "beaconwatch_sse_clients_dropped_total", factory: factory)
        latency = CoreMetrics.Timer(label: "beaconwatch_event_latency_seconds", factory: factory)
        var scannerStates: [String: CoreMetrics.Gauge] = [:]
        for state in ["online", "offline"] {
            scannerStates[state] = CoreMetrics.Gauge(
                label: "beaconwatch_scanners", dimensions: [("state", state)], factory: factory)
        }
        self.scannerStates = scannerStates
        for type in Self.outputTypes { outputs[type]?.increment(by: 0) }
        connected.record(0)
    }

    /// An output of `type` was delivered.
    func output(_ type: String) { outputs[type]?.increment() }

    /// A step's outputs were delivered `duration` after the engine staged it.
    func latency(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        latency.recordNanoseconds(seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000)
    }

    /// Totals from a reading of the engines.
    func take(_ snapshot: WebState.Snapshot) {
        let (newReports, newSightings) = counted.withLock { counted in
            defer { (counted.reports, counted.sightings) = (snapshot.reports, snapshot.sightings) }
            return (max(0, snapshot.reports - counted.reports), max(0, snapshot.sightings - counted.sightings))
        }
        reports.increment(by: Int64(newReports))
        sightings.increment(by: Int64(newSightings))
        devices.record(snapshot.devices.count)
        var counts = ["area": 0, "zone": 0, "beacon": 0]
        for device in snapshot.devices {
            for presence in device.reading.monitor.inside { counts[presence.region.kind.rawValue, default: 0] += 1 }
        }
        for (kind, count) in counts { inside[kind]?.record(count) }
        scannerStates["online"]?.record(snapshot.scanners.filter(\.online).count)
        scannerStates["offline"]?.record(snapshot.scanners.filter { !$0.online }.count)
        if let states = snapshot.occupancy { take(occupancy: states) }
        scannerReports.withLock { known in
            for scanner in snapshot.scanners {
                var entry =
                    known[scanner.id]
                    ?? (
                        CoreMetrics.Counter(
                            label: "beaconwatch_scanner_reports_total", dimensions: [("scanner", scanner.id)],
                            factory: factory), 0
                    )
                entry.counter.increment(by: Int64(max(0, scanner.health.reports - entry.counted)))
                entry.counted = scanner.health.reports
                known[scanner.id] = entry
            }
        }
    }

    /// Each announced region's occupancy: `beaconwatch_zone_occupants{zone,region}` and
    /// `beaconwatch_zone_occupied{zone,region}` (1 or 0), `area` for an Area's; `zone` is its name,
    /// else its canonical region, and `region` the canonical form (two rooms may share a name).
    func take(occupancy states: [OccupancyChange]) {
        occupancy.withLock { gauges in
            for state in states {
                let pair =
                    gauges[state.region]
                    ?? {
                        let kind = state.region.kind == .area ? "area" : "zone"
                        let dimensions = [
                            (kind, state.name ?? state.region.description), ("region", state.region.description),
                        ]
                        return (
                            CoreMetrics.Gauge(
                                label: "beaconwatch_\(kind)_occupants", dimensions: dimensions, factory: factory),
                            CoreMetrics.Gauge(
                                label: "beaconwatch_\(kind)_occupied", dimensions: dimensions, factory: factory)
                        )
                    }()
                gauges[state.region] = pair
                pair.occupants.record(state.count)
                pair.occupied.record(state.occupied ? 1 : 0)
            }
        }
    }

    /// The broker connection, the outbox and the script runner now.
    func take(outbox depth: Int?, connected isConnected: Bool?, scripts pending: Int, slowClients total: Int) {
        if let depth { outbox.record(depth) }
        if let isConnected { connected.record(isConnected ? 1 : 0) }
        scripts.record(pending)
        let added = counted.withLock { counted in
            defer { counted.slow = total }
            return max(0, total - counted.slow)
        }
        if added > 0 { slowClients.increment(by: Int64(added)) }
    }

    /// A daemon of a cluster: whether it is the active (docs/behaviour.md §21); the gauge is there
    /// only then.
    func take(clusterActive: Bool) {
        let gauge = cluster.withLock { gauge in
            if gauge == nil { gauge = CoreMetrics.Gauge(label: "beaconwatch_cluster_active", factory: factory) }
            return gauge
        }
        gauge?.record(clusterActive ? 1 : 0)
    }

    /// The Prometheus text format.
    package func text() -> String {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }
}
