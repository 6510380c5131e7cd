// swift-tools-version: 6.1
// beaconwatch: iBeacon region monitoring for building automation (see README.md).

import PackageDescription

let package = Package(
    name: "beaconwatch",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "beaconwatch", targets: ["beaconwatch"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // gpsd's client (docs/behaviour.md §17): already built for Hummingbird.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // SHA-1 of the OwnTracks app's derived waypoint ids (docs/behaviour.md §15.1): already built for
        // async-http-client's TLS.
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // An ESPresense companion's config.yaml as a floor plan (docs/behaviour.md §20).
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        // Pure: JSON text, read and written without Foundation's boxes (every parser's, every
        // output's), and the cursor the fixed-shape lines are written with.
        .target(name: "JSONText"),
        // Pure, the vocabulary every module shares, one folder each: Decoding (advertisements,
        // HCI reports, btsnoop), HCI (commands, scan set-up), Trace (trace lines, sources),
        // Positions (fixes), Commands (B/cmd payloads), Time (timestamps, local days, the clock,
        // DeadlineQueue), Support (FNV, a seeded generator, hex, printable text, input errors).
        .target(name: "BeaconCore", dependencies: ["JSONText"]),
        // Pure: gpsd's protocol (its WATCH request, TPV reports to fixes, the line buffer); the
        // endpoint (`Monitor.position = gpsd:HOST:PORT`) is BeaconCore's (Positions).
        .target(name: "GPSD", dependencies: ["BeaconCore", "JSONText"]),
        // Pure: simulated walks through a building and floors of scanners hearing tags, for
        // `simulate`, the benchmarks and the tests.
        .target(name: "Simulation", dependencies: ["BeaconCore", "Floorplan", "RegionMonitor"]),

        // Pure, one device's view of the building, one folder each: Hierarchy (Areas, Zones,
        // beacons), Monitor (the state machine and its clock), CapPolicy (HSYCO's region cap),
        // Presence (enter, exit, the adaptive exit), Ranging (filters, classes, nearest), Rooms (a
        // tag's room from scanners' reports or its position on a floor plan), Alerts, Dwell,
        // Geofences, Outputs (every output's JSON, rule outputs).
        .target(name: "RegionMonitor", dependencies: ["JSONText", "BeaconCore", "Floorplan"]),
        // Pure: floors (rooms as polygons, walls, doors, scanners' points) compiled to a grid, the
        // radio learned from the building, and the position estimator (docs/behaviour.md §20).
        .target(name: "Floorplan"),
        // Pure: Ubudu rules documents, opening-hours schedules, the rule engine.
        .target(name: "Rules", dependencies: ["JSONText", "BeaconCore", "RegionMonitor"]),
        // hsyco-style ini to typed configuration, with line-numbered diagnostics.
        .target(
            name: "BeaconConfiguration",
            dependencies: [
                "JSONText", "Cluster",
                "BeaconCore", "Floorplan", "RegionMonitor", "Syscalls", .product(name: "Yams", package: "Yams"),
            ]),
        // Pure: the per-device engine (monitor, ranging, nearest, rules, alerts, dwell) behind one
        // entry point, inputs in, ordered actions out; no database, no network, no threads.
        .target(
            name: "Engine", dependencies: ["BeaconCore", "BeaconConfiguration", "Floorplan", "RegionMonitor", "Rules"]),

        // SQLite through GRDB: last reported classes, rule counters, the outbox, the rules cache;
        // WAL, versioned migrations.
        .target(
            name: "Persistence",
            dependencies: [
                "BeaconCore", "CSQLiteSession", "Engine", "Floorplan", "RegionMonitor", "Rules", "Syscalls",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),

        // Thin shells over the C libraries (module maps and shim headers only).
        .systemLibrary(
            name: "CBluetooth",
            pkgConfig: "bluez",
            providers: [.apt(["libbluetooth-dev"])]
        ),
        // SQLite's session extension (changesets), for the cluster's state shipping.
        .systemLibrary(name: "CSQLiteSession", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        // The shells' primitives: the errno wrapper (EINTR retried, errno typed), a wake-up
        // descriptor, a condition async code awaits (woken, never polled), the one timer thread,
        // the bounded pool of worker threads for blocking jobs, and child processes (scripts).
        .target(name: "Syscalls", dependencies: ["BeaconCore"]),
        // Pure: the table of devices (Devices: the own radio and the fleet, one Engine each), the
        // fleet's payloads (OwnTracks, Theengs, forward) to observations, waypoint commands.
        .target(
            name: "Fleet",
            dependencies: [
                "JSONText",
                "BeaconCore", "BeaconConfiguration", "Engine", "Floorplan", "RegionMonitor", "Rules",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]),
        // Pure: the election of one active daemon among a cluster's (docs/behaviour.md §21), through
        // the broker.
        .target(name: "Cluster"),
        .target(
            name: "BlueZ",
            dependencies: ["BeaconCore", "CBluetooth", "Syscalls", .product(name: "Logging", package: "swift-log")]),
        .target(name: "MQTT", dependencies: ["BeaconCore", "CMosquitto", "Syscalls"]),
        // Pure: what the web view shows (devices, their regions, dwell, transitions) as values,
        // rendered to HTML and JSON; fed by outputs and engine snapshots.
        .target(
            name: "WebView",
            dependencies: [
                "JSONText", "BeaconCore", "BeaconConfiguration", "Engine", "Floorplan", "RegionMonitor", "Rules",
            ]),

        // The shells, one folder each: Broker (the broker connection and MQTTInput, the incoming
        // MQTT; in a cluster the cluster connection, ClusterLink, and its step acknowledgements),
        // Inputs (Refusals: what the daemon refuses, counted and said without flooding the log),
        // FileSources, Loop (the engine's thread, EngineDriver), Sinks (--events, MQTT and its
        // outbox, scripts), RulesIO, Web (and a standby's), Fleet (forward nodes), Services (the
        // daemon's lifecycle, a cluster's roles).
        .target(
            name: "Daemon",
            dependencies: [
                "GPSD", "JSONText",
                "Cluster", "BeaconCore", "BlueZ", "BeaconConfiguration", "Engine", "Fleet", "Floorplan", "MQTT",
                "Persistence", "RegionMonitor",
                "Rules",
                "Syscalls", "WebView", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),

        .executableTarget(
            name: "beaconwatch",
            dependencies: [
                "JSONText", "Simulation",
                "BeaconCore", "BlueZ", "BeaconConfiguration", "Daemon", "Engine", "Floorplan", "MQTT", "Persistence",
                "RegionMonitor",
                "Rules", "Syscalls",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            plugins: ["BuildInfo"]
        ),
        // The checkout's commit for `beaconwatch --version`, written before each build.
        .plugin(name: "BuildInfo", capability: .buildTool(), path: "Sources/BuildInfo"),
        // Every parser and the engine behind one entry each, for libFuzzer (scripts/fuzz) and
        // the tests that replay what it found.
        .target(
            name: "FuzzTargets",
            dependencies: [
                "JSONText", "BeaconCore", "BeaconConfiguration", "Engine", "Fleet", "RegionMonitor", "Rules",
            ]),
        .target(name: "CFuzzerDriver"),
        .executableTarget(name: "beaconwatch-fuzz", dependencies: ["CFuzzerDriver", "FuzzTargets", "Syscalls"]),
        .executableTarget(
            name: "beaconwatch-bench",
            dependencies: [
                "Simulation",
                "BeaconCore", "BeaconConfiguration", "Daemon", "Engine", "Floorplan", "MQTT", "Persistence",
                "RegionMonitor", "Rules", "Syscalls", "Fleet",
                "TestSupport", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // Test helpers: the conformance vectors' location, expected-sighting shapes, a seeded RNG.
        .target(
            name: "TestSupport",
            dependencies: [
                "BeaconCore", "RegionMonitor", "Syscalls", .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/TestSupport"),
        .testTarget(name: "BeaconCoreTests", dependencies: ["GPSD", "JSONText", "BeaconCore", "TestSupport"]),
        .testTarget(
            name: "FuzzTargetsTests", dependencies: ["FuzzTargets", "BeaconCore", "BeaconConfiguration", "Rules"]),
        .testTarget(name: "ClusterTests", dependencies: ["Cluster"]),
        .testTarget(name: "BlueZTests", dependencies: ["BlueZ", "BeaconCore", "Syscalls", "TestSupport"]),
        .testTarget(
            name: "RegionMonitorTests", dependencies: ["Simulation", "RegionMonitor", "BeaconCore", "Floorplan"]),
        .testTarget(name: "FloorplanTests", dependencies: ["Floorplan"]),
        .testTarget(
            name: "ConfigurationTests",
            dependencies: ["BeaconConfiguration", "Floorplan", "RegionMonitor", "BeaconCore", "TestSupport"]),
        .testTarget(
            name: "RulesTests", dependencies: ["JSONText", "Rules", "BeaconCore", "RegionMonitor", "TestSupport"]),
        .testTarget(
            name: "FleetTests",
            dependencies: [
                "Fleet", "BeaconCore", "BeaconConfiguration", "Engine", "RegionMonitor", "Rules", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        .testTarget(
            name: "EngineTests",
            dependencies: ["Engine", "BeaconCore", "BeaconConfiguration", "RegionMonitor", "Rules", "TestSupport"]),
        .testTarget(
            name: "WebViewTests", dependencies: ["WebView", "BeaconCore", "Engine", "Floorplan", "RegionMonitor"]),
        .testTarget(
            name: "PersistenceTests", dependencies: ["Persistence", "Engine", "Fleet", "RegionMonitor", "Rules"]),
        .testTarget(
            name: "MQTTTests", dependencies: ["MQTT", "BeaconCore", "Syscalls", "TestSupport"]),
        .testTarget(
            name: "DaemonTests",
            dependencies: [
                "JSONText", "Simulation",
                "Daemon", "BeaconCore", "BeaconConfiguration", "Engine", "MQTT", "Persistence", "RegionMonitor",
                "Rules", "Syscalls", "Fleet",
                "TestSupport",
                "beaconwatch",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Cross-module optimisation is off for our own modules: Swift 6.3.1's conservative CMO (on by
// default in release builds) inlines a getter that builds an enum with a Foundation UUID
// payload into another module with the wrong case tag (`Hierarchy.Zone.region` read as a
// Beacon region, minor taken from uninitialised bytes: WebViewTests.zonesAreNamedByTheirOwnRegion
// fails in release without this line). The benchmarks measured no loss (README, Performance).
for target in package.targets where [.regular, .executable, .test].contains(target.type) {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-disable-cmo"])]
}
