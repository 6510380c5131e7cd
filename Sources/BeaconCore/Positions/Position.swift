/// A position fix (docs/behaviour.md §17): where the device is, and how sure it is. From a trace position line,
/// gpsd's TPV reports or an OwnTracks `location` message.
package struct Position: Sendable, Hashable {
    /// Degrees north, -90 to 90.
    package var latitude: Double
    /// Degrees east, -180 to 180.
    package var longitude: Double
    /// The radius of uncertainty in metres, when the source gives one.
    package var accuracy: Double?

    package init(latitude: Double, longitude: Double, accuracy: Double?) {
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
    }

    /// The largest accuracy read from any source, in metres: a larger one is garbage, not a fix.
    package static let accuracyLimit = 1e7

    /// A fix from untrusted numbers: `nil` unless the latitude is in -90...90, the longitude in
    /// -180...180 and the accuracy (when given) in 0...``accuracyLimit``, all finite.
    package init?(checkingLatitude latitude: Double, longitude: Double, accuracy: Double?) {
        guard latitude.isFinite, longitude.isFinite, (-90...90).contains(latitude), (-180...180).contains(longitude)
        else { return nil }
        if let accuracy, !(accuracy.isFinite && (0...Self.accuracyLimit).contains(accuracy)) { return nil }
        self.init(latitude: latitude, longitude: longitude, accuracy: accuracy)
    }
}
