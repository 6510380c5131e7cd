import BeaconCore
import Foundation

/// What a u_geofences.json `radius` is counted in (`Rules.geofenceRadiusUnit`, docs/behaviour.md §17): the
/// Ubudu specification says metres, its own example export writes kilometres.
package enum GeofenceRadiusUnit: String, Sendable, Hashable, CaseIterable {
    case m, km

    /// Metres per unit.
    package var metres: Double { self == .km ? 1000 : 1 }
}

/// A circular geofence of a u_geofences.json document (docs/behaviour.md §17): an Ubudu area defined by a
/// centre and a radius instead of a beacon pattern.
package struct Geofence: Sendable, Hashable {
    /// The document's `id`, as text.
    package var id: String
    package var name: String?
    /// The centre, degrees north and east.
    package var latitude: Double
    package var longitude: Double
    /// Metres (after `Rules.geofenceRadiusUnit`).
    package var radius: Double

    package init(id: String, name: String?, latitude: Double, longitude: Double, radius: Double) {
        self.id = id
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
        self.radius = radius
    }

    /// The name shown for it (`B/geofence`, the web view): its name, else its id.
    package var label: String { name.flatMap { $0.isEmpty ? nil : $0 } ?? id }

    /// The key of its dwell (`B/dwell/geofence/<id>`): `geofence/<id>`, apart from every canonical
    /// beacon region (which never holds a `/`).
    package var dwellKey: String { Self.dwellKey(id: id) }

    /// ``dwellKey`` of the geofence with `id`.
    package static func dwellKey(id: String) -> String { "geofence/\(id)" }
}

/// Great-circle distance on a sphere (docs/behaviour.md §17): not flat-earth, so that fixes across the
/// antimeridian or near a pole measure what they should.
package enum GreatCircle {
    /// The mean Earth radius of docs/behaviour.md §17, metres.
    package static let earthRadius = 6_371_008.8

    static let radiansPerDegree = Double.pi / 180

    /// The haversine distance in metres between two points given in degrees.
    package static func distance(
        latitude lat1: Double, longitude lon1: Double, latitude lat2: Double, longitude lon2: Double
    ) -> Double {
        let phi1 = lat1 * radiansPerDegree
        let phi2 = lat2 * radiansPerDegree
        return distance(phi1: phi1, cosPhi1: cos(phi1), phi2: phi2, cosPhi2: cos(phi2), deltaLambda: lon2 - lon1)
    }

    /// The haversine distance with the cosines of both latitudes worked out beforehand (a
    /// geofence's centre keeps its own); `deltaLambda` in degrees.
    @inline(__always)
    static func distance(phi1: Double, cosPhi1: Double, phi2: Double, cosPhi2: Double, deltaLambda: Double) -> Double {
        let halfPhi = sin((phi2 - phi1) / 2)
        let halfLambda = sin(deltaLambda * radiansPerDegree / 2)
        let h = halfPhi * halfPhi + cosPhi1 * cosPhi2 * halfLambda * halfLambda
        return 2 * earthRadius * asin(min(1, h.squareRoot()))
    }
}

/// A geofence `enter` or `exit` (docs/behaviour.md §17): the output `{"type": "enter"|"exit", "kind":
/// "geofence", …}`.
package struct GeofenceTransition: Sendable, Hashable {
    package var direction: Transition.Direction
    /// The geofence's `id`.
    package var id: String
    package var name: String?
    /// Metres from the centre at the fix that decided it, to the decimetre.
    package var distance: Double
    /// Seconds of the visit, on `exit`.
    package var dwell: Double?
    /// Seconds inside the geofence this local day, this visit included, on `exit`.
    package var dwellToday: Double?

    package init(
        direction: Transition.Direction, id: String, name: String?, distance: Double, dwell: Double? = nil,
        dwellToday: Double? = nil
    ) {
        self.direction = direction
        self.id = id
        self.name = name
        self.distance = distance
        self.dwell = dwell
        self.dwellToday = dwellToday
    }
}
