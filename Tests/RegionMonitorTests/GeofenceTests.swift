import BeaconCore
import Foundation
import RegionMonitor
import Testing

/// docs/behaviour.md §17: haversine distance, and presence in geofences fix by fix.
@Suite struct GeofenceTests {
    static let start = Timestamp(secondsSinceEpoch: 1_789_459_200)!

    static func at(_ seconds: Double) -> Timestamp { start.adding(seconds: seconds) }

    /// The point `metres` north of (`latitude`, `longitude`) along its meridian.
    static func north(of latitude: Double, by metres: Double) -> Double {
        latitude + metres / GreatCircle.earthRadius * 180 / .pi
    }

    static func fix(_ latitude: Double, _ longitude: Double, acc: Double? = 5) -> Position {
        Position(latitude: latitude, longitude: longitude, accuracy: acc)
    }

    /// What a fix gives, as `enter 52`, `exit 35`.
    static func feed(_ monitor: inout GeofenceMonitor, _ position: Position, at seconds: Double) -> [String] {
        var outputs: [MonitorOutput] = []
        monitor.fix(position, at: at(seconds), into: &outputs)
        return outputs.compactMap {
            guard case .geofence(_, let transition) = $0 else { return nil }
            return "\(transition.direction.rawValue) \(transition.id)"
        }
    }

    // MARK: - Distance

    @Test func haversineMatchesKnownDistances() {
        // One degree of longitude on the equator, and of latitude anywhere: 2πR/360.
        let degree = 2 * Double.pi * GreatCircle.earthRadius / 360
        #expect(abs(GreatCircle.distance(latitude: 0, longitude: 0, latitude: 0, longitude: 1) - degree) < 1e-6)
        #expect(abs(GreatCircle.distance(latitude: 45, longitude: 7, latitude: 46, longitude: 7) - degree) < 1e-6)
        // Pole to pole: half the circumference.
        let half = Double.pi * GreatCircle.earthRadius
        #expect(abs(GreatCircle.distance(latitude: 90, longitude: 0, latitude: -90, longitude: 123) - half) < 1e-6)
        // Paris to London, about 343.5 km on this sphere.
        let paris = GreatCircle.distance(latitude: 48.8566, longitude: 2.3522, latitude: 51.5074, longitude: -0.1278)
        #expect(abs(paris - 343_556) < 100)
    }

    @Test func theAntimeridianIsNotTheOtherSideOfTheWorld() {
        // 179.999° E to 179.999° W on the equator: 0.002° apart, about 222 m, not 40,000 km.
        let across = GreatCircle.distance(latitude: 0, longitude: 179.999, latitude: 0, longitude: -179.999)
        #expect(abs(across - 222.39) < 0.01)
    }

    @Test func atThePoleEveryLongitudeIsTheSamePlace() {
        let pole = GreatCircle.distance(latitude: 90, longitude: 0, latitude: 90, longitude: 180)
        #expect(pole < 1e-6)
        // Near the pole, longitudes 180° apart are close: flat-earth would say thousands of km.
        let near = GreatCircle.distance(latitude: 89.999, longitude: 0, latitude: 89.999, longitude: 180)
        #expect(abs(near - 222.39) < 0.01)
    }

    // MARK: - Presence

    static let paris = Geofence(id: "52", name: "Shop", latitude: 48.86821546, longitude: 2.3231598, radius: 100)

    @Test func aFixExactlyOnTheRadiusEnters() {
        // A point on the meridian, worked out until its haversine distance is exactly the radius.
        var latitude = Self.north(of: Self.paris.latitude, by: 100)
        while GreatCircle.distance(
            latitude: Self.paris.latitude, longitude: Self.paris.longitude, latitude: latitude,
            longitude: Self.paris.longitude) > 100
        {
            latitude = latitude.nextDown
        }
        var monitor = GeofenceMonitor(geofences: [Self.paris])
        let beyond = latitude.nextUp.nextUp
        #expect(
            GreatCircle.distance(
                latitude: Self.paris.latitude, longitude: Self.paris.longitude, latitude: beyond,
                longitude: Self.paris.longitude) > 100)
        #expect(Self.feed(&monitor, Self.fix(beyond, Self.paris.longitude), at: 0) == [])
        #expect(Self.feed(&monitor, Self.fix(latitude, Self.paris.longitude), at: 1) == ["enter 52"])
    }

    @Test func exitWaitsForTheRadiusPlusTheLargerOfAccuracyAndHysteresis() {
        var monitor = GeofenceMonitor(geofences: [Self.paris], settings: GeofenceSettings(hysteresis: 20))
        let lng = Self.paris.longitude
        #expect(Self.feed(&monitor, Self.fix(Self.paris.latitude, lng), at: 0) == ["enter 52"])
        // 119 m with accuracy 5: within 100 + 20.
        #expect(Self.feed(&monitor, Self.fix(Self.north(of: Self.paris.latitude, by: 119), lng), at: 1) == [])
        // 150 m with accuracy 60: within 100 + 60.
        let far = Self.north(of: Self.paris.latitude, by: 150)
        #expect(Self.feed(&monitor, Self.fix(far, lng, acc: 60), at: 2) == [])
        // 121 m with accuracy 5: beyond 100 + 20.
        #expect(Self.feed(&monitor, Self.fix(Self.north(of: Self.paris.latitude, by: 121), lng), at: 3) == ["exit 52"])
        // Between the radius and the exit margin, outside stays outside.
        #expect(Self.feed(&monitor, Self.fix(Self.north(of: Self.paris.latitude, by: 110), lng), at: 4) == [])
    }

    @Test func aFixLessAccurateThanTheLimitIsIgnoredAndOneLessAccurateThanTheRadiusIsNot() {
        let small = Geofence(id: "s", name: nil, latitude: 10, longitude: 10, radius: 5)
        var monitor = GeofenceMonitor(geofences: [small], settings: GeofenceSettings(maxPositionError: 100))
        var outputs: [MonitorOutput] = []
        #expect(!monitor.fix(Self.fix(10, 10, acc: 100.5), at: Self.at(0), into: &outputs))
        #expect(outputs.isEmpty && monitor.inaccurateFixes == 1 && monitor.lastFix == nil)
        // Accuracy 50 m, larger than the 5 m radius but within the limit: the fix counts.
        #expect(Self.feed(&monitor, Self.fix(10, 10, acc: 50), at: 1) == ["enter s"])
        // A fix without accuracy is taken as exact: the hysteresis alone (20 m) decides the exit.
        let away = Self.north(of: 10, by: 26)
        #expect(Self.feed(&monitor, Self.fix(away, 10, acc: nil), at: 2) == ["exit s"])
    }

    @Test func withoutFixesTheStateHoldsAndAJumpAcrossAGeofenceIsNoVisit() {
        var monitor = GeofenceMonitor(geofences: [Self.paris])
        let lng = Self.paris.longitude
        // 500 m south, then 500 m north: the path crossed the geofence, no fix was inside.
        #expect(Self.feed(&monitor, Self.fix(Self.north(of: Self.paris.latitude, by: -500), lng), at: 0) == [])
        #expect(Self.feed(&monitor, Self.fix(Self.north(of: Self.paris.latitude, by: 500), lng), at: 60) == [])
        #expect(Self.feed(&monitor, Self.fix(Self.paris.latitude, lng), at: 120) == ["enter 52"])
        // An hour with no fix: still inside; the exit's dwell counts the whole visit.
        var outputs: [MonitorOutput] = []
        monitor.fix(Self.fix(Self.north(of: Self.paris.latitude, by: 500), lng), at: Self.at(3720), into: &outputs)
        guard case .geofence(_, let exit)? = outputs.first else {
            Issue.record("no exit")
            return
        }
        #expect(exit.direction == .exit && exit.dwell == 3600)
        #expect(abs(exit.distance - 500) < 0.2)
    }

    @Test func aZeroRadiusGeofenceIsEnteredOnlyAtItsCentre() {
        let point = Geofence(id: "p", name: nil, latitude: -33.8568, longitude: 151.2153, radius: 0)
        var monitor = GeofenceMonitor(geofences: [point])
        #expect(Self.feed(&monitor, Self.fix(Self.north(of: -33.8568, by: 0.5), 151.2153), at: 0) == [])
        #expect(Self.feed(&monitor, Self.fix(-33.8568, 151.2153), at: 1) == ["enter p"])
        #expect(Self.feed(&monitor, Self.fix(Self.north(of: -33.8568, by: 19), 151.2153), at: 2) == [])
        #expect(Self.feed(&monitor, Self.fix(Self.north(of: -33.8568, by: 21), 151.2153), at: 3) == ["exit p"])
    }

    @Test func geofencesAcrossTheAntimeridianAndAtThePole() {
        let dateLine = Geofence(id: "fiji", name: nil, latitude: -17, longitude: 179.9995, radius: 200)
        let pole = Geofence(id: "pole", name: nil, latitude: 90, longitude: 0, radius: 1000)
        var monitor = GeofenceMonitor(geofences: [dateLine, pole])
        // 0.001° west of the centre, across the line: about 106 m away.
        #expect(Self.feed(&monitor, Self.fix(-17, -179.9995), at: 0) == ["enter fiji"])
        #expect(Self.feed(&monitor, Self.fix(-17, 179.999), at: 1) == [])
        // Any longitude near the pole is inside it.
        #expect(Self.feed(&monitor, Self.fix(89.995, -135), at: 2) == ["exit fiji", "enter pole"])
        #expect(Self.feed(&monitor, Self.fix(89.995, 45), at: 3) == [])
        #expect(Self.feed(&monitor, Self.fix(89.98, 45), at: 4) == ["exit pole"])
    }

    @Test func oneFixExitsBeforeItEntersEachInDocumentOrder() {
        let a = Geofence(id: "a", name: nil, latitude: 0, longitude: 0, radius: 500)
        let b = Geofence(id: "b", name: "Bee", latitude: 0, longitude: 0, radius: 1000)
        let c = Geofence(id: "c", name: nil, latitude: 0, longitude: 0.1, radius: 500)
        let d = Geofence(id: "d", name: nil, latitude: 0, longitude: 0.1, radius: 1000)
        var monitor = GeofenceMonitor(geofences: [a, b, c, d])
        #expect(Self.feed(&monitor, Self.fix(0, 0), at: 0) == ["enter a", "enter b"])
        #expect(monitor.insideLabels == ["a", "Bee"])
        #expect(Self.feed(&monitor, Self.fix(0, 0.1), at: 1) == ["exit a", "exit b", "enter c", "enter d"])
        #expect(monitor.insideLabels == ["c", "d"])
    }

    @Test func aReloadKeepsTheVisitsOfGeofencesThatStay() {
        let a = Geofence(id: "a", name: nil, latitude: 0, longitude: 0, radius: 500)
        let b = Geofence(id: "b", name: nil, latitude: 0, longitude: 0, radius: 800)
        var monitor = GeofenceMonitor(geofences: [a, b])
        #expect(Self.feed(&monitor, Self.fix(0, 0), at: 0) == ["enter a", "enter b"])
        let moved = Geofence(id: "b", name: "B", latitude: 0, longitude: 0, radius: 900)
        var reloaded = GeofenceMonitor(reloading: monitor, geofences: [moved], settings: monitor.settings)
        #expect(reloaded.insideLabels == ["B"])
        var outputs: [MonitorOutput] = []
        reloaded.fix(Self.fix(0, 1), at: Self.at(30), into: &outputs)
        guard case .geofence(_, let exit)? = outputs.first else {
            Issue.record("no exit")
            return
        }
        #expect(exit.id == "b" && exit.dwell == 30)
    }

    @Test func theIndexFindsWhatAScanOfEveryGeofenceFinds() {
        var random = SeededGenerator(seed: 17)
        // Small, large and polar geofences, some across the antimeridian.
        var geofences: [Geofence] = []
        for index in 0..<2000 {
            let latitude = Double.random(in: -90...90, using: &random)
            let longitude =
                index % 10 == 0 ? [179.99, -179.99][index % 20 / 10] : Double.random(in: -180...180, using: &random)
            let radius = [5.0, 80, 900, 15_000, 400_000, 3_000_000][index % 6]
            geofences.append(
                Geofence(id: "\(index)", name: nil, latitude: latitude, longitude: longitude, radius: radius))
        }
        let settings = GeofenceSettings()
        var indexed = GeofenceMonitor(geofences: geofences, settings: settings)
        var last = geofences[0]
        for step in 0..<6000 {
            // In turn: a geofence's centre, a point just beyond its radius (where only the exit
            // margin keeps it inside), and anywhere.
            var latitude: Double
            var longitude: Double
            switch step % 3 {
            case 0:
                last = geofences[Int.random(in: 0..<geofences.count, using: &random)]
                (latitude, longitude) = (last.latitude, last.longitude)
            case 1:
                let metres = last.radius + Double.random(in: 0...140, using: &random)
                (latitude, longitude) = Self.destination(
                    from: last, metres: metres, bearing: Double.random(in: 0..<(2 * .pi), using: &random))
            default:
                latitude = Double.random(in: -90...90, using: &random)
                longitude = Double.random(in: -180...180, using: &random)
            }
            let accuracy = Double.random(in: 0...100, using: &random)
            let before = Set(indexed.inside)
            var outputs: [MonitorOutput] = []
            indexed.fix(Self.fix(latitude, longitude, acc: accuracy), at: Self.at(Double(step)), into: &outputs)
            // The rule of docs/behaviour.md §17, by a scan of every geofence.
            var expected = before
            for (position, geofence) in geofences.enumerated() {
                let distance = GreatCircle.distance(
                    latitude: geofence.latitude, longitude: geofence.longitude, latitude: latitude,
                    longitude: longitude)
                if before.contains(position) {
                    if distance > geofence.radius + max(accuracy, settings.hysteresis) { expected.remove(position) }
                } else if distance <= geofence.radius {
                    expected.insert(position)
                }
            }
            #expect(Set(indexed.inside) == expected, "fix \(step) at \(latitude), \(longitude)")
            if Set(indexed.inside) != expected { return }
        }
    }

    /// The point `metres` from a geofence's centre on `bearing` (radians from north), on the sphere.
    static func destination(from centre: Geofence, metres: Double, bearing: Double) -> (Double, Double) {
        let delta = metres / GreatCircle.earthRadius
        let phi1 = centre.latitude * .pi / 180
        let lambda1 = centre.longitude * .pi / 180
        let phi2 = asin(sin(phi1) * cos(delta) + cos(phi1) * sin(delta) * cos(bearing))
        var lambda2 = lambda1 + atan2(sin(bearing) * sin(delta) * cos(phi1), cos(delta) - sin(phi1) * sin(phi2))
        lambda2 = (lambda2 + 3 * .pi).truncatingRemainder(dividingBy: 2 * .pi) - .pi
        return (min(90, max(-90, phi2 * 180 / .pi)), min(180, max(-180, lambda2 * 180 / .pi)))
    }

    @Test func garbageFixesAreRefusedAtTheEdge() {
        #expect(Position(checkingLatitude: .nan, longitude: 0, accuracy: nil) == nil)
        #expect(Position(checkingLatitude: 91, longitude: 0, accuracy: nil) == nil)
        #expect(Position(checkingLatitude: 0, longitude: -180.5, accuracy: nil) == nil)
        #expect(Position(checkingLatitude: 0, longitude: 0, accuracy: -1) == nil)
        #expect(Position(checkingLatitude: 0, longitude: 0, accuracy: .infinity) == nil)
        #expect(Position(checkingLatitude: -90, longitude: 180, accuracy: 0) != nil)
    }
}
