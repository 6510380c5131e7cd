import Foundation

/// The values a rule's URL templates name (docs/behaviour.md §7.7).
package struct TemplateValues: Sendable, Hashable {
    package var namespace: String
    package var udid: String
    /// `Monitor.lat`, `Monitor.lng` as written; empty when not set.
    package var lat: String
    package var lng: String

    package init(namespace: String = "", udid: String = "", lat: String = "", lng: String = "") {
        self.namespace = namespace
        self.udid = udid
        self.lat = lat
        self.lng = lng
    }
}

/// A `notify_server` or `open_url` template: `{id}`, `{lat}`, `{lng}`, `{udid}` and `{namespace}`
/// are replaced wherever they occur, each value percent-encoded; any other `{…}` stays as written.
package struct URLTemplate: Sendable, Hashable {
    package var text: String

    package init(_ text: String) { self.text = text }

    /// The URL for the rule region `id`.
    package func expanded(id: String, values: TemplateValues) -> String {
        let replacements = [
            "id": id, "lat": values.lat, "lng": values.lng, "udid": values.udid, "namespace": values.namespace,
        ]
        var result = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            result += rest[..<open]
            let after = rest[rest.index(after: open)...]
            if let close = after.firstIndex(of: "}"), let value = replacements[String(after[..<close])] {
                result += Self.percentEncoded(value)
                rest = after[after.index(after: close)...]
            } else {
                result += "{"
                rest = after
            }
        }
        return result + rest
    }

    /// RFC 3986: everything but the unreserved characters is escaped.
    static func percentEncoded(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
