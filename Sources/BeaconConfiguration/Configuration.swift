import BeaconCore
import Floorplan
import Foundation
import RegionMonitor

/// A loaded hsyco.ini: every key of docs/behaviour.md §2 typed, with the warnings it gave.
package struct Configuration: Sendable {
    /// The file's path as given; relative paths in values were resolved against its folder.
    package var path: String
    package var hierarchy = Hierarchy()
    package var monitor = MonitorSettings()
    /// `nil` when `MQTT.host` is not set (MQTT off).
    package var mqtt: MQTTSettings?
    /// `nil` without `Cluster.name` (a daemon alone; docs/behaviour.md §21).
    package var cluster: ClusterSettings?
    /// `nil` without a fleet source (`Fleet.owntracks`, `Fleet.theengs`, `Fleet.forward`).
    package var fleet: FleetSettings?
    /// `nil` without scanners or tags (docs/behaviour.md §19).
    package var scanners: ScannerSettings?
    /// `nil` without any floor plan key (docs/behaviour.md §20).
    package var floorPlan: FloorPlanSettings?
    /// `Occupancy.*`, `Sensor.*` and the `occupant` keys (docs/behaviour.md §23); `nil` without any.
    package var occupancy: OccupancySettings?
    /// The floors compiled from ``floorPlan``, by Area index: what `Tags.rooms = position` runs on.
    package var floors: [Int32: FloorMap] = [:]
    /// Each floor's building (floors joined by `Stairs` or stacked by their levels), by Area index.
    package var buildings: [Int32: Building] = [:]
    package var rules = RulesSettings()
    /// `LocationAlert.<id>` in file order.
    package var alerts: [AlertDefinition] = []
    package var alertResetAfter: Double = 60
    package var scripts: [ScriptEvent: String] = [:]
    package var scriptTimeout: Double = 10
    /// `State.database`; `nil` means the default location, decided at start.
    package var stateDatabase: String?
    /// `State.keepDays`: days of dwell history the state database keeps; older days are pruned.
    package var keepDays = 400
    /// `Web.*`: the web view and HTTP API; `nil` when `Web.listen` is empty (off).
    package var web: WebSettings? = WebSettings()
    /// `Web.token`, also when `Web.listen` is empty (`run --web-listen` may turn the view on).
    package var webToken: String?
    /// Keys that beaconwatch does not know, kept so that a full HSYCO hsyco.ini loads.
    package var unknownKeys: [IniFile.Entry] = []
    /// Unknown keys and doubtful settings, each with its line.
    package var warnings: [InputError] = []
    /// The line each key was set on, for messages about a value found wanting later (`check`).
    package var lines: [String: Int] = [:]

    package init(path: String) {
        self.path = path
    }

    /// A message about the value of `key`, at the line that set it.
    package func problem(_ key: String, _ message: String) -> InputError {
        InputError(file: path, line: lines[key], message: message)
    }

    /// `Scanners.*` sources with no `MQTT.host`: what `run` stops on (they report over the broker),
    /// while `replay` takes the same reports from a trace (docs/behaviour.md §19).
    package var scannersWithoutBroker: InputError? {
        guard mqtt == nil, let first = scanners?.sources.min(by: { (lines[$0.key] ?? 0) < (lines[$1.key] ?? 0) })
        else { return nil }
        return problem(
            first.key, "scanners report over MQTT: set MQTT.host (and MQTT.port) to the broker they use")
    }
}

/// `MQTT.*` (docs/behaviour.md §2.3). The password never appears in ``description``.
package struct MQTTSettings: Sendable, Hashable, CustomStringConvertible {
    package enum Version: String, Sendable, Hashable {
        case v311 = "3.1.1"
        case v5 = "5"
    }

    package var host: String
    package var port: Int
    package var clientID: String
    package var username: String?
    package var password: String?
    package var passwordFile: String?
    package var tlsCA: String?
    package var tlsCert: String?
    package var tlsKey: String?
    package var version: Version = .v311
    package var topic = "beaconwatch"
    package var qos = 1
    package var keepalive = 30
    package var homeAssistant = true
    package var discoveryPrefix = "homeassistant"
    /// `MQTT.homeAreas`: the Areas a Home Assistant tracker is `home` in, as `B/area` says them (the
    /// Area's name, else its UUID); `nil`: every Area (docs/home-assistant.md).
    package var homeAreas: [String]?

    package var usesTLS: Bool { tlsCA != nil }

    /// The TLS files the client reads at start, each with its key: `check` and the MQTT sink
    /// both ask whether they can be read before libmosquitto does.
    package var tlsFiles: [(key: String, path: String)] {
        [("MQTT.tls.ca", tlsCA), ("MQTT.tls.cert", tlsCert), ("MQTT.tls.key", tlsKey)].compactMap { key, path in
            path.map { (key, $0) }
        }
    }

    package var description: String {
        var text =
            "\(usesTLS ? "mqtts" : "mqtt")://\(host.excerpt):\(port) as \(clientID.excerpt), MQTT \(version.rawValue), "
            + "topic \(topic), QoS \(qos), keepalive \(keepalive) s"
        if let username { text += ", user \(username.excerpt)" }
        if password != nil || passwordFile != nil { text += ", password set" }
        if homeAssistant {
            text += ", Home Assistant discovery under \(discoveryPrefix.excerpt)"
            if let homeAreas { text += " (home in \(homeAreas.map(\.excerpt).joined(separator: ", ")))" }
        }
        return text
    }
}

/// `Rules.*` (docs/behaviour.md §2.4).
package struct RulesSettings: Sendable, Hashable {
    package enum Source: Sendable, Hashable, CustomStringConvertible {
        case file(String)
        case url(URL)

        package var description: String {
            switch self {
            case .file(let path): path
            case .url(let url): url.absoluteString
            }
        }
    }

    package var source: Source?
    package var namespace = ""
    package var refresh: Double = 3600
    /// 0 = unlimited.
    package var maxNotificationsPerDay = 0
    package var autoServerNotify = true
    package var autoUserNotify = true
    package var serverTimeout: Double = 5
    /// `Rules.geofences`: a u_geofences.json file or URL (docs/behaviour.md §17).
    package var geofences: Source?
    /// `Rules.geofenceRadiusUnit`: what the document's radii are counted in.
    package var geofenceRadiusUnit = GeofenceRadiusUnit.m

    package init() {}
}

/// The outputs a `Script.<type>` may be hung on (docs/behaviour.md §10.2).
package enum ScriptEvent: String, Sendable, Hashable, CaseIterable {
    case location, enter, exit, rule, server, notification, alert, nearest, occupancy
}
