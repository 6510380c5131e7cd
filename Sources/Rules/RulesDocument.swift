import BeaconCore
import Foundation
import JSONText
import RegionMonitor

/// One Ubudu rule (docs/behaviour.md §7.1): when it fires, and what it does.
package struct Rule: Sendable, Hashable {
    package var id: String
    /// `on_entry`, `on_exit`, and a Zone's `occupied`, `vacant` (docs/behaviour.md §23); other
    /// values are kept and never fire.
    package var trigger: String
    /// 0 when empty or negative.
    package var minEvents: Int
    /// `nil` (no limit) when empty or negative.
    package var maxEvents: Int?
    package var minGroupEvents: Int
    package var maxGroupEvents: Int?
    /// Seconds; 0 when empty or negative.
    package var latchTime: Int
    /// The region counts as inside only while its closest beacon is at most this class.
    package var maximumProximity: Proximity?
    /// `notify_user`: the alert body (plain text, or `alertBody` of embedded JSON), and its payload.
    package var alertBody: String?
    package var payload: JSONValue?
    package var notifyServer: String?
    package var openURL: String?
    package var openPBK: String?

    /// What it shows the user, unless its server hook replaces it.
    package var action: RuleAction {
        RuleAction(alertBody: alertBody, payload: payload, openURL: openURL, openPBK: openPBK)
    }
}

/// Where a rule region is (docs/behaviour.md §7.1, §17): a beacon pattern, or a geofence.
package enum RulePlace: Sendable, Hashable {
    /// `proximity_uid`, `major`, `minor` of a u_beacons.json region (`nil`: any).
    case beacons(UUID, major: UInt16?, minor: UInt16?)
    /// A circle of a u_geofences.json document.
    case geofence(Geofence)
}

/// A region of a rules document with its rules (docs/behaviour.md §7.1): a beacon region of u_beacons.json,
/// or a geofence of u_geofences.json (docs/behaviour.md §17), with the same rules, schedules and group counts.
package struct RuleRegion: Sendable, Hashable {
    package var id: String
    package var group: String?
    package var name: String?
    package var place: RulePlace
    package var start: Timestamp?
    package var end: Timestamp?
    /// The zone the document names (`nil` when it names none that exists: then UTC, with a warning).
    package var timeZone: TimeZone?
    package var schedule: Schedule
    package var rules: [Rule]
    /// What was untidy but loaded, one line each.
    package var warnings: [String]

    /// The geofence, for a region of u_geofences.json.
    package var geofence: Geofence? {
        if case .geofence(let geofence) = place { geofence } else { nil }
    }

    /// `UUID`, `UUID:major` or `UUID:major:minor`: the configured region it attaches to; for a
    /// geofence, `geofence <id>`.
    package var pattern: String {
        switch place {
        case .beacons(let uuid, let major, let minor):
            var text = uuid.text
            if let major {
                text += ":\(major)"
                if let minor { text += ":\(minor)" }
            }
            return text
        case .geofence(let geofence):
            return "geofence \(geofence.id)"
        }
    }

    /// The key of its rules' counts (docs/behaviour.md §7.3): the id, and `geofence:<id>` for a geofence, so that
    /// the two documents' ids never share a count.
    package var countKey: String { geofence == nil ? id : "geofence:\(id)" }
}

/// A u_beacons.json document (docs/behaviour.md §7.1), read the way real Ubudu servers write it.
package struct RulesDocument: Sendable, Hashable {
    package var regions: [RuleRegion]
    package var validUntil: Timestamp?

    /// Parses a document; `name` says where it came from in messages. Garbage is refused with one
    /// line naming the region and field.
    package static func load(_ bytes: some Sequence<UInt8>, name: String) -> Result<RulesDocument, RulesError> {
        guard let document = JSONValue.parse(bytes) else {
            return .failure(RulesError("\(name): not JSON; a rules source is a u_beacons.json document"))
        }
        guard case .array(let items)? = document["u_beacons"] else {
            return .failure(RulesError("\(name): no \"u_beacons\" list; a rules source is a u_beacons.json document"))
        }
        var regions: [RuleRegion] = []
        for (index, item) in items.enumerated() {
            do throws(RulesError) {
                regions.append(try region(item, at: "\(name): u_beacons[\(index)]"))
            } catch {
                return .failure(error)
            }
        }
        let validUntil = document["valid_until"]?.text.flatMap(Timestamp.init(iso8601:))
        return .success(RulesDocument(regions: regions, validUntil: validUntil))
    }

    static func region(_ item: JSONValue, at place: String) throws(RulesError) -> RuleRegion {
        let (id, here) = try identify(item, at: place)
        guard let uuidText = item["proximity_uid"]?.text, let uuid = UUID(uuidString: uuidText) else {
            throw RulesError("\(here): \"proximity_uid\" must be a beacon UUID")
        }
        func part(_ key: String) throws(RulesError) -> UInt16? {
            guard let value = item[key], !value.isNothing else { return nil }
            guard let number = value.integer, (0...65535).contains(number) else {
                throw RulesError("\(here): \"\(key)\" must be 0 to 65535, or empty for any")
            }
            return UInt16(number)
        }
        let major = try part("major")
        let minor = try part("minor")
        return try common(
            item, id: id, here: here, place: .beacons(uuid, major: major, minor: major == nil ? nil : minor))
    }

    /// A region's `id`, and how messages name it.
    static func identify(_ item: JSONValue, at place: String) throws(RulesError) -> (String, String) {
        guard case .object = item else { throw RulesError("\(place) is not an object") }
        guard let id = item["id"]?.text else { throw RulesError("\(place) has no \"id\"") }
        return (id, "\(place) (id \(id.excerpt))")
    }

    /// What beacon regions and geofences share: group, name, validity, time zone, schedule, rules.
    static func common(_ item: JSONValue, id: String, here: String, place: RulePlace) throws(RulesError) -> RuleRegion {
        func instant(_ key: String) throws(RulesError) -> Timestamp? {
            guard let text = item[key]?.text else { return nil }
            guard let time = Timestamp(iso8601: text) else {
                throw RulesError(
                    "\(here): \"\(key)\" must be an ISO-8601 time with an offset, such as 2013-10-29T16:43:17+01:00")
            }
            return time
        }
        var warnings: [String] = []
        let zone = RegionTimeZone.resolve(item["timezone"])
        if zone == nil { warnings.append("no usable time zone; schedules are read in UTC") }
        var spelledThi = false
        let schedule = try Schedule(ubudu: item["schedule"], path: "\(here): schedule") { _ in spelledThi = true }
        if spelledThi { warnings.append("weekday 'thi' read as 'thu'") }
        var rules: [Rule] = []
        if case .array(let list)? = item["rules_actions"] {
            for (index, entry) in list.enumerated() {
                rules.append(try rule(entry, at: "\(here): rules_actions[\(index)]"))
            }
        } else if !item["rules_actions"].isNothing {
            throw RulesError("\(here): \"rules_actions\" must be a list")
        }
        return RuleRegion(
            id: id, group: item["group_id"]?.text, name: item["name"]?.text, place: place, start: try instant("start"),
            end: try instant("end"), timeZone: zone, schedule: schedule, rules: rules, warnings: warnings)
    }

    static func rule(_ entry: JSONValue, at place: String) throws(RulesError) -> Rule {
        guard case .object = entry, let id = entry["id"]?.text else { throw RulesError("\(place) has no \"id\"") }
        let here = "\(place) (rule \(id.excerpt))"
        let rule = entry["rule"] ?? .null
        let action = entry["action"] ?? .null
        func count(_ key: String) throws(RulesError) -> Int? {
            guard let value = rule[key], !value.isNothing else { return nil }
            guard let number = value.integer else { throw RulesError("\(here): \"\(key)\" must be a whole number") }
            return number < 0 ? nil : number
        }
        var proximity: Proximity?
        if let value = rule["maximum_proximity"], !value.isNothing {
            guard let number = value.integer, (0...2).contains(number) else {
                throw RulesError("\(here): \"maximum_proximity\" must be 0 (immediate), 1 (near) or 2 (far)")
            }
            proximity = [Proximity.immediate, .near, .far][number]
        }
        let shown = RuleAction(ubudu: action)
        return Rule(
            id: id, trigger: rule["trigger"]?.text ?? "", minEvents: try count("min_events") ?? 0,
            maxEvents: try count("max_events"), minGroupEvents: try count("min_group_events") ?? 0,
            maxGroupEvents: try count("max_group_events"), latchTime: try count("latch_time") ?? 0,
            maximumProximity: proximity, alertBody: shown.alertBody, payload: shown.payload,
            notifyServer: action["notify_server"]?.text, openURL: shown.openURL, openPBK: shown.openPBK)
    }
}

extension RuleRegion {
    /// The configured region with this region's pattern (docs/behaviour.md §7.1): an Area for `UUID`, a Zone
    /// for `UUID:major`, a Beacon for `UUID:major:minor`; `nil` when none is configured, and then
    /// its rules never fire.
    package func attachment(in hierarchy: Hierarchy) -> Region? {
        guard case .beacons(let uuid, let major, let minor) = place else { return nil }
        guard let major else { return hierarchy.areaIndex(of: uuid).map { _ in .area(uuid) } }
        guard let minor else {
            let zone = Region.zone(uuid, major: major)
            return hierarchy.zoneIndex(of: zone).map { _ in zone }
        }
        let beacon = BeaconID(uuid: uuid, major: major, minor: minor)
        return hierarchy.index(of: beacon).map { _ in .beacon(beacon) }
    }
}
