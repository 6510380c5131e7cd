import Foundation

/// The values a rule's URL templates name (docs/behaviour.md §7.7).
public struct TemplateValues: Sendable, Hashable {
    public var namespace: String
    public var udid: String
    /// `Monitor.lat`, `Monitor.lng` as written; empty when not set.
    public var lat: String
    public var lng: String

    public init(namespace: String = "", udid: String = "", lat: String = "", lng: String = "") {
        self.namespace = namespace
        self.udid = udid
        self.lat = lat
        self.lng = lng
    }
}

/// A `notify_server` or `open_url` template: `{id}`, `{lat}`, `{lng}`, `{udid}` and `{namespace}`
/// are replaced wherever they occur, each value percent-encoded; any other `{…}` stays as written.
public struct URLTemplate: Sendable, Hashable {
    public var text: String

    public init(_ text: String) { self.text = text }

    /// The URL for the rule region `id`.
    public func expanded(id: String, values: TemplateValues) -> String {
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
