import BeaconConfiguration
import Rules

extension RuleSettings {
    /// The rule engine's settings from `configuration`: `Rules.*`, `Monitor.timezone` (the
    /// system's zone when unset), and the template values, with `Monitor.udid` defaulting to
    /// `machineID` (empty when `nil`). The shell reads /etc/machine-id; this stays pure.
    package init(_ configuration: Configuration, machineID: String?) {
        self.init()
        let rules = configuration.rules
        maxNotificationsPerDay = rules.maxNotificationsPerDay
        autoServerNotify = rules.autoServerNotify
        autoUserNotify = rules.autoUserNotify
        serverTimeout = rules.serverTimeout
        serverScript = configuration.scripts[.server] != nil
        timeZone = configuration.monitor.timezone ?? .current
        let monitor = configuration.monitor
        values = TemplateValues(
            namespace: rules.namespace,
            udid: monitor.udid ?? machineID ?? "",
            lat: monitor.lat.map { "\($0)" } ?? "",
            lng: monitor.lng.map { "\($0)" } ?? "")
    }
}
