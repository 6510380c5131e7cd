import BeaconCore
import Cluster
import Foundation
import RegionMonitor
import Syscalls

/// The MQTT broker's and the web view's keys (docs/configuration.md).
extension Loader {
    mutating func loadMQTT(_ entries: [String: IniFile.Entry]) {
        guard let hostEntry = entries["MQTT.host"], !hostEntry.value.isEmpty else {
            if let any = entries.values.min(by: { $0.line < $1.line }) {
                warn(any, "MQTT settings without MQTT.host: MQTT is off; set MQTT.host to publish")
            }
            return
        }
        var settings = MQTTSettings(host: hostEntry.value, port: 1883, clientID: "")
        if let entry = entries["MQTT.version"] {
            guard let version = MQTTSettings.Version(rawValue: entry.value) else {
                error(entry, "MQTT version '\(entry.value.excerpt)' must be 3.1.1 or 5")
                return
            }
            settings.version = version
        }
        if let entry = entries["MQTT.tls.ca"], let value = text(entry) { settings.tlsCA = resolve(value) }
        if let entry = entries["MQTT.tls.cert"], let value = text(entry) { settings.tlsCert = resolve(value) }
        if let entry = entries["MQTT.tls.key"], let value = text(entry) { settings.tlsKey = resolve(value) }
        if (settings.tlsCert == nil) != (settings.tlsKey == nil),
            let entry = entries["MQTT.tls.cert"] ?? entries["MQTT.tls.key"]
        {
            error(entry, "MQTT.tls.cert and MQTT.tls.key go together; set both for a client certificate, or neither")
        }
        if settings.tlsCA == nil, let entry = entries["MQTT.tls.cert"] ?? entries["MQTT.tls.key"] {
            error(entry, "a client certificate needs TLS: set MQTT.tls.ca to the broker's CA file")
        }
        settings.port = settings.usesTLS ? 8883 : 1883
        if let entry = entries["MQTT.port"], let port = integer(entry, 1...65535, "a TCP port") { settings.port = port }
        if let entry = entries["MQTT.username"] { settings.username = text(entry) }
        if let entry = entries["MQTT.password"] { settings.password = entry.value }
        if let entry = entries["MQTT.passwordFile"], let value = text(entry) { settings.passwordFile = resolve(value) }
        if settings.password != nil, settings.passwordFile != nil, let entry = entries["MQTT.passwordFile"] {
            error(entry, "both MQTT.password and MQTT.passwordFile are set; keep one (the file is safer)")
        }
        if let entry = entries["MQTT.topic"] {
            let topic = entry.value
            guard !topic.isEmpty, !topic.contains("+"), !topic.contains("#"), !topic.hasPrefix("/"),
                !topic.hasSuffix("/")
            else {
                error(
                    entry,
                    "MQTT.topic '\(topic.excerpt)' must be a topic without + or # and without a leading or trailing /"
                )
                return
            }
            settings.topic = topic
        }
        if let entry = entries["MQTT.qos"], let qos = integer(entry, 0...2, "0, 1 or 2") { settings.qos = qos }
        if let entry = entries["MQTT.keepalive"], let value = integer(entry, 5...65535, "seconds, at least 5") {
            settings.keepalive = value
        }
        if let entry = entries["MQTT.homeassistant"], let value = boolean(entry) { settings.homeAssistant = value }
        if let entry = entries["MQTT.discoveryPrefix"], let value = text(entry) { settings.discoveryPrefix = value }
        if let entry = entries["MQTT.homeAreas"] { settings.homeAreas = homeAreas(entry) }
        if let entry = entries["MQTT.clientId"] {
            guard let id = text(entry) else { return }
            if settings.version == .v311, id.utf8.count > 23 {
                error(
                    entry,
                    "client id '\(id.excerpt)' is \(id.utf8.count) bytes; MQTT 3.1.1 allows 23: shorten it or set MQTT.version = 5"
                )
                return
            }
            settings.clientID = id
        } else {
            // The default, beaconwatch-<userid>, cut to what MQTT 3.1.1 allows.
            let full = "beaconwatch-" + (configuration.monitor.userid ?? "")
            settings.clientID = settings.version == .v311 ? String(decoding: full.utf8.prefix(23), as: UTF8.self) : full
        }
        configuration.mqtt = settings
    }

    /// `MQTT.homeAreas = <Area>, …`: each an Area's name (`LocationAreaName.<uuid>`) or UUID, as
    /// `B/area` says it (its name when it has one); `nil` after an error.
    mutating func homeAreas(_ entry: IniFile.Entry) -> [String]? {
        let areas = configuration.hierarchy.areas
        var said: [String] = []
        for part in entry.value.split(separator: ",") {
            let text = part.trimmingCharacters(in: .whitespaces)
            guard
                let area = areas.first(where: { $0.name == text })
                    ?? areas.first(where: { $0.uuid.uuidString.caseInsensitiveCompare(text) == .orderedSame })
            else {
                let known = areas.map { $0.name ?? $0.uuid.uuidString }.joined(separator: ", ")
                error(
                    entry,
                    "MQTT.homeAreas: '\(text.excerpt)' is no Area; give Areas' names or UUIDs (\(known.isEmpty ? "none configured" : known)), comma-separated"
                )
                return nil
            }
            said.append(area.name ?? area.region.description)
        }
        return said.isEmpty ? nil : said
    }

    /// `Cluster.name` and `Cluster.keepalive` (docs/behaviour.md §21). A cluster elects through
    /// the broker and names its members by their `MQTT.clientId`, so it needs both, the id a
    /// topic level.
    mutating func loadCluster(_ entries: [String: IniFile.Entry], clientID: IniFile.Entry?) {
        guard let nameEntry = entries["Cluster.name"] else {
            if let any = entries.values.min(by: { $0.line < $1.line }) {
                warn(any, "\(any.key) without Cluster.name: this daemon runs alone; set Cluster.name for a cluster")
            }
            return
        }
        guard LeaderRecord.isMember(nameEntry.value) else {
            error(
                nameEntry,
                "Cluster.name '\(nameEntry.value.excerpt)' must be 1 to 64 letters, digits, '-', '_' or '.' (it is a topic level)"
            )
            return
        }
        guard let mqtt = configuration.mqtt else {
            error(
                nameEntry,
                "a cluster elects its active through the broker: set MQTT.host (the same broker on every daemon)")
            return
        }
        guard let idEntry = clientID else {
            error(
                nameEntry,
                "a cluster's daemons are told apart by MQTT.clientId: set it, different on each daemon (such as bw-hall-1)"
            )
            return
        }
        guard LeaderRecord.isMember(mqtt.clientID) else {
            error(
                idEntry,
                "MQTT.clientId '\(mqtt.clientID.excerpt)' names this daemon in Cluster.name's election: use letters, digits, '-', '_' or '.'"
            )
            return
        }
        // The election's connection is `<clientId>-cluster`, within MQTT 3.1.1's 23 bytes.
        if mqtt.version == .v311, mqtt.clientID.utf8.count > 15 {
            error(
                idEntry,
                "MQTT.clientId '\(mqtt.clientID.excerpt)' is \(mqtt.clientID.utf8.count) bytes; in a cluster MQTT 3.1.1 allows 15 (the election's connection adds '-cluster'): shorten it or set MQTT.version = 5"
            )
            return
        }
        var settings = ClusterSettings(name: nameEntry.value, member: mqtt.clientID)
        if let entry = entries["Cluster.keepalive"], let value = integer(entry, 1...3600, "seconds") {
            settings.keepalive = value
        }
        configuration.cluster = settings
    }

    /// Checks across keys: class boundaries in order, the region cap against the hierarchy.
    /// `Web.listen` and `Web.token` (docs/behaviour.md §16): off when the address is empty; an address other
    /// machines can reach needs a token.
    mutating func loadWeb(_ entries: [String: IniFile.Entry]) {
        var settings = WebSettings()
        if let entry = entries["Web.token"] {
            if entry.value.isEmpty {
                error(entry, "Web.token is empty; give a long random secret (openssl rand -hex 24) or remove the line")
            } else if !entry.value.unicodeScalars.allSatisfy({
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-._~+/=".unicodeScalars.contains($0))
            }) {
                error(
                    entry,
                    "Web.token may hold letters, digits and - . _ ~ + / = only (it travels in a header and a cookie); openssl rand -hex 24 makes one"
                )
            } else if entry.value.count < 16 {
                warn(entry, "Web.token is shorter than 16 characters; a guessable token guards nothing")
                settings.token = entry.value
            } else {
                settings.token = entry.value
            }
        }
        configuration.webToken = settings.token
        if let entry = entries["Web.listen"] {
            if entry.value.isEmpty {
                configuration.web = nil
                return
            }
            switch WebSettings.listening(on: entry.value, token: settings.token) {
            case .failure(let problem):
                error(entry, problem.message("Web.listen", entry.value))
                return
            case .success(let listening):
                settings = listening
            }
        }
        configuration.web = settings
    }
}
