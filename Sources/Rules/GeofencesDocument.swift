import BeaconCore
import Foundation
import JSONText
import RegionMonitor

/// A u_geofences.json document (docs/behaviour.md §17): `{"u_geofences": [geofence…], "valid_until": …}`, each
/// geofence an Ubudu area with `id`, `name`, `lat`, `lng`, `radius` and the rules, schedules and
/// group counts of a beacon region (docs/behaviour.md §7.1), read as untidily as real exports are written.
package enum GeofencesDocument {
    /// Below this many metres, a radius read in metres is probably kilometres (`check` warns).
    package static let smallRadius = 10.0

    /// Parses a document, its radii in `unit`; `name` says where it came from in messages.
    /// Garbage is refused with one line naming the geofence and field.
    package static func load(_ bytes: some Sequence<UInt8>, name: String, unit: GeofenceRadiusUnit) -> Result<
        RulesDocument, RulesError
    > {
        guard let document = JSONValue.parse(bytes) else {
            return .failure(RulesError("\(name): not JSON; a geofences source is a u_geofences.json document"))
        }
        guard case .array(let items)? = document["u_geofences"] else {
            return .failure(
                RulesError("\(name): no \"u_geofences\" list; a geofences source is a u_geofences.json document"))
        }
        var regions: [RuleRegion] = []
        var ids = Set<String>()
        for (index, item) in items.enumerated() {
            do throws(RulesError) {
                let region = try geofence(item, at: "\(name): u_geofences[\(index)]", unit: unit)
                guard ids.insert(region.id).inserted else {
                    throw RulesError(
                        "\(name): u_geofences[\(index)] repeats id \(region.id.excerpt); ids must be unique")
                }
                regions.append(region)
            } catch {
                return .failure(error)
            }
        }
        let validUntil = document["valid_until"]?.text.flatMap(Timestamp.init(iso8601:))
        return .success(RulesDocument(regions: regions, validUntil: validUntil))
    }

    static func geofence(_ item: JSONValue, at place: String, unit: GeofenceRadiusUnit) throws(RulesError)
        -> RuleRegion
    {
        let (id, here) = try RulesDocument.identify(item, at: place)
        func degrees(_ key: String, _ range: ClosedRange<Double>, _ what: String) throws(RulesError) -> Double {
            guard let value = item[key]?.decimal, range.contains(value) else {
                throw RulesError("\(here): \"\(key)\" must be degrees \(what)")
            }
            return value
        }
        let latitude = try degrees("lat", -90...90, "north from -90 to 90")
        let longitude = try degrees("lng", -180...180, "east from -180 to 180")
        guard let radius = item["radius"]?.decimal, radius >= 0, radius * unit.metres <= 2e7 else {
            throw RulesError("\(here): \"radius\" must be a distance from 0 to 20000 km, in \(unit.rawValue)")
        }
        let metres = radius * unit.metres
        var region = try RulesDocument.common(
            item, id: id, here: here,
            place: .geofence(
                Geofence(
                    id: id, name: item["name"]?.text, latitude: latitude, longitude: longitude, radius: metres)))
        if unit == .m, metres < smallRadius {
            region.warnings.append(
                "radius \(JSONValue.numberText(metres)) m is under 10 m: did you mean Rules.geofenceRadiusUnit = km?")
        }
        return region
    }
}

extension JSONValue {
    /// A finite number, or a string holding one (`"0.1"`): Ubudu exports write both.
    var decimal: Double? {
        switch self {
        case .number(let value): value.isFinite ? value : nil
        case .string(let text): Double(text.trimmingCharacters(in: .whitespaces)).flatMap { $0.isFinite ? $0 : nil }
        default: nil
        }
    }
}
