import CMosquitto

/// libmosquitto, as linked into this build.
package enum Mosquitto {
    /// The library's version, `major.minor.revision`.
    package static var libraryVersion: String {
        var major: Int32 = 0
        var minor: Int32 = 0
        var revision: Int32 = 0
        mosquitto_lib_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }
}
