import BeaconCore
import Floorplan
import Foundation
import RegionMonitor

/// A loaded hsyco.ini: every key of docs/behaviour.md §2 typed, with the warnings it gave.
public struct Configuration: Sendable {
    /// The file's path as given; relative paths in values were resolved against its folder.
    public var path: String
    public var hierarchy = Hierarchy()
    public var monitor = MonitorSettings()
    /// `nil` when `MQTT.host` is not set (MQTT off).
    public var mqtt: MQTTSettings?
    /// `nil` without `Cluster.name` (a daemon alone; docs/behaviour.md §21).
    public var cluster: ClusterSettings?
    /// `nil` without a fleet source (`Fleet.owntracks`, `Fleet.theengs`, `Fleet.forward`).
    public var fleet: FleetSettings?
    /// `nil` without scanners or tags (docs/behaviour.md §19).
    public var scanners: ScannerSettings?
    /// `nil` without any floor plan key (docs/behaviour.md §20).
    public var floorPlan: FloorPlanSettings?
    /// The floors compiled from ``floorPlan``, by Area index: what `Tags.rooms = position` runs on.
    public var floors: [Int32: FloorMap] = [:]
    public var rules = RulesSettings()
    /// `LocationAlert.<id>` in file order.
    public var alerts: [AlertDefinition] = []
    public var alertResetAfter: Double = 60
    public var scripts: [ScriptEvent: String] = [:]
    public var scriptTimeout: Double = 10
    /// `State.database`; `nil` means the default location, decided at start.
    public var stateDatabase: String?
    /// `State.keepDays`: days of dwell history the state database keeps; older days are pruned.
    public var keepDays = 400
    /// `Web.*`: the web view and HTTP API; `nil` when `Web.listen` is empty (off).
    public var web: WebSettings? = WebSettings()
    /// `Web.token`, also when `Web.listen` is empty (`run --web-listen` may turn the view on).
    public var webToken: String?
    /// Keys that beaconwatch does not know, kept so that a full HSYCO hsyco.ini loads.
    public var unknownKeys: [IniFile.Entry] = []
    /// Unknown keys and doubtful settings, each with its line.
    public var warnings: [InputError] = []
    /// The line each key was set on, for messages about a value found wanting later (`check`).
    public var lines: [String: Int] = [:]

    public init(path: String) {
        self.path = path
    }

    /// A message about the value of `key`, at the line that set it.
    public func problem(_ key: String, _ message: String) -> InputError {
        InputError(file: path, line: lines[key], message: message)
    }

    /// `Scanners.*` sources with no `MQTT.host`: what `run` stops on (they report over the broker),
    /// while `replay` takes the same reports from a trace (docs/behaviour.md §19).
    public var scannersWithoutBroker: InputError? {
        guard mqtt == nil, let first = scanners?.sources.min(by: { (lines[$0.key] ?? 0) < (lines[$1.key] ?? 0) })
        else { return nil }
        return problem(
            first.key, "scanners report over MQTT: set MQTT.host (and MQTT.port) to the broker they use")
    }
}

/// `MQTT.*` (docs/behaviour.md §2.3). The password never appears in ``description``.
public struct MQTTSettings: Sendable, Hashable, CustomStringConvertible {
    public enum Version: String, Sendable, Hashable {
        case v311 = "3.1.1"
        case v5 = "5"
    }

    public var host: String
    public var port: Int
    public var clientID: String
    public var username: String?
    public var password: String?
    public var passwordFile: String?
    public var tlsCA: String?
    public var tlsCert: String?
    public var tlsKey: String?
    public var version: Version = .v311
    public var topic = "beaconwatch"
    public var qos = 1
    public var keepalive = 30
    public var homeAssistant = true
    public var discoveryPrefix = "homeassistant"

    public var usesTLS: Bool { tlsCA != nil }

    /// The TLS files the client reads at start, each with its key: `check` and the MQTT sink
    /// both ask whether they can be read before libmosquitto does.
    public var tlsFiles: [(key: String, path: String)] {
        [("MQTT.tls.ca", tlsCA), ("MQTT.tls.cert", tlsCert), ("MQTT.tls.key", tlsKey)].compactMap { key, path in
            path.map { (key, $0) }
        }
    }

    public var description: String {
        var text =
            "\(usesTLS ? "mqtts" : "mqtt")://\(host.excerpt):\(port) as \(clientID.excerpt), MQTT \(version.rawValue), "
            + "topic \(topic), QoS \(qos), keepalive \(keepalive) s"
        if let username { text += ", user \(username.excerpt)" }
        if password != nil || passwordFile != nil { text += ", password set" }
        if homeAssistant { text += ", Home Assistant discovery under \(discoveryPrefix.excerpt)" }
        return text
    }
}

/// `Rules.*` (docs/behaviour.md §2.4).
public struct RulesSettings: Sendable, Hashable {
    public enum Source: Sendable, Hashable, CustomStringConvertible {
        case file(String)
        case url(URL)

        public var description: String {
            switch self {
            case .file(let path): path
            case .url(let url): url.absoluteString
            }
        }
    }

    public var source: Source?
    public var namespace = ""
    public var refresh: Double = 3600
    /// 0 = unlimited.
    public var maxNotificationsPerDay = 0
    public var autoServerNotify = true
    public var autoUserNotify = true
    public var serverTimeout: Double = 5
    /// `Rules.geofences`: a u_geofences.json file or URL (docs/behaviour.md §17).
    public var geofences: Source?
    /// `Rules.geofenceRadiusUnit`: what the document's radii are counted in.
    public var geofenceRadiusUnit = GeofenceRadiusUnit.m

    public init() {}
}

/// The outputs a `Script.<type>` may be hung on (docs/behaviour.md §10.2).
public enum ScriptEvent: String, Sendable, Hashable, CaseIterable {
    case location, enter, exit, rule, server, notification, alert, nearest
}
