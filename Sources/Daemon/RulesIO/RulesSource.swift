import BeaconCore
import BeaconConfiguration
import Foundation
import Persistence
import RegionMonitor
import Rules
import Syscalls

/// Reads `Rules.source` (SPEC 7.1): a u_beacons.json file, or an http(s) URL fetched with the
/// Ubudu query parameters, kept in the state database and used until `valid_until` (or
/// `Rules.refresh`); when a fetch fails, the kept copy stays in force.
public struct RulesSource: Sendable {
    /// A document fetch gives up after this long.
    public static let fetchTimeout = 30.0
    /// A rules document larger than this is refused.
    public static let sizeLimit = 16 << 20
    /// Never fetch more often than this, whatever `valid_until` says.
    public static let shortestRefresh = 60.0

    /// What was read, and from where.
    public struct Loaded: Sendable {
        public var regions: [RuleRegion]
        /// When to fetch again (URL sources).
        public var expires: Timestamp?
        /// `file`, `fetched`, or the kept copy, for the log.
        public var origin: String
    }

    public let settings: RulesSettings
    public let values: TemplateValues
    let hierarchy: Hierarchy

    public init(configuration: Configuration, values: TemplateValues) {
        settings = configuration.rules
        hierarchy = configuration.hierarchy
        self.values = values
    }

    /// The source of `configuration`, with its resolved template values (`Monitor.udid` defaults
    /// to /etc/machine-id).
    public init(configuration: Configuration) {
        self.init(configuration: configuration, values: RuleSettings.resolve(configuration).values)
    }

    /// ``load(store:now:fetchKeptCopy:warn:)``, then a warning for what each region loaded
    /// untidily and for each region that attaches to no configured region.
    public func loadWarning(store: StateStore, now: Timestamp, fetchKeptCopy: Bool = false, warn: (String) -> Void)
        throws -> Loaded?
    {
        guard let loaded = try load(store: store, now: now, fetchKeptCopy: fetchKeptCopy, warn: warn) else {
            return nil
        }
        for region in loaded.regions {
            for warning in region.warnings { warn("Rules.source region \(region.id): \(warning)") }
            if region.attachment(in: hierarchy) == nil {
                warn(
                    "Rules.source region \(region.id) (\(region.pattern)) matches no configured Area, Zone or Beacon; its rules never fire"
                )
            }
        }
        return loaded
    }

    /// The URL as requested: the source with `api_version=2`, `namespace`, `udid`, `lat`, `lgn`
    /// (sic) added to its query (the known ones).
    public func requestURL(_ url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        var items = components.queryItems ?? []
        items.append(URLQueryItem(name: "api_version", value: "2"))
        items.append(URLQueryItem(name: "namespace", value: values.namespace))
        if !values.udid.isEmpty { items.append(URLQueryItem(name: "udid", value: values.udid)) }
        if !values.lat.isEmpty { items.append(URLQueryItem(name: "lat", value: values.lat)) }
        if !values.lng.isEmpty { items.append(URLQueryItem(name: "lgn", value: values.lng)) }
        components.queryItems = items
        return components.url ?? url
    }

    /// Reads the source now. `nil` without `Rules.source`. A bad file throws ``InputError``; a URL
    /// that cannot be fetched (or gives garbage) falls back on the kept copy, saying so through
    /// `warn`; with no copy, there are no rule regions until a fetch succeeds.
    public func load(store: StateStore, now: Timestamp, fetchKeptCopy: Bool = false, warn: (String) -> Void) throws
        -> Loaded?
    {
        switch settings.source {
        case nil:
            return nil
        case .file(let path):
            let bytes = try Self.readFile(path, check: "check Rules.source names an existing file").get()
            switch RulesDocument.load(bytes, name: path) {
            case .success(let document): return Loaded(regions: document.regions, expires: nil, origin: "file")
            case .failure(let error):
                throw InputError(file: path, message: error.detail(after: path))
            }
        case .url(let url):
            let kept = try store.cachedRules(source: url.absoluteString)
            var keptDocument: RulesDocument?
            if let kept, case .success(let document) = RulesDocument.load(kept.document, name: "kept copy") {
                keptDocument = document
                let expires = expiry(validUntil: document.validUntil, fetchedAt: kept.fetchedAt)
                if !fetchKeptCopy, now < expires {
                    return Loaded(
                        regions: document.regions, expires: expires,
                        origin: "kept copy fetched \(kept.fetchedAt.iso8601)")
                }
            }
            switch fetch(url) {
            case .success(let (bytes, document)):
                try store.cacheRules(source: url.absoluteString, document: bytes, fetchedAt: now)
                return Loaded(
                    regions: document.regions,
                    expires: max(
                        expiry(validUntil: document.validUntil, fetchedAt: now),
                        now.adding(seconds: Self.shortestRefresh)),
                    origin: "fetched")
            case .failure(let why):
                let retry = now.adding(seconds: max(Self.shortestRefresh, min(settings.refresh, 600)))
                if let keptDocument, let kept {
                    warn(
                        "Rules.source \(url.absoluteString): \(why); the copy fetched \(kept.fetchedAt.iso8601) stays in force"
                    )
                    return Loaded(
                        regions: keptDocument.regions, expires: retry,
                        origin: "kept copy fetched \(kept.fetchedAt.iso8601)")
                }
                warn(
                    "Rules.source \(url.absoluteString): \(why); no copy is kept yet, so no rules apply until a fetch succeeds"
                )
                return Loaded(regions: [], expires: retry, origin: "nothing (fetch failed)")
            }
        }
    }

    /// The rules document at `path`, within ``sizeLimit``; a failure names the file, the cause and
    /// `check`, what to do.
    public static func readFile(_ path: String, check: String) -> Result<[UInt8], InputError> {
        Document.read(path, limit: sizeLimit).mapError { failure in
            if case .tooLarge = failure {
                return InputError(file: path, message: "\(failure); a rules document is a few kilobytes per region")
            }
            return InputError(file: path, message: "\(failure); \(check)")
        }
    }

    /// One fetch of `url`: the document's bytes and what they hold, or why not.
    func fetch(_ url: URL) -> Result<([UInt8], RulesDocument), HTTPFetch.Failure> {
        download(requestURL(url)).flatMap { bytes in
            switch RulesDocument.load(bytes, name: "reply") {
            case .success(let document): .success((bytes, document))
            case .failure(let error): .failure(HTTPFetch.Failure(description: error.message))
            }
        }
    }

    /// The body of a 2xx reply to a GET of `url` (as it is: ``requestURL(_:)`` adds the query).
    public func download(_ url: URL) -> Result<[UInt8], HTTPFetch.Failure> {
        Self.download(url)
    }

    /// The body of a 2xx reply to a GET of `url`, within ``fetchTimeout`` and ``sizeLimit``.
    public static func download(_ url: URL) -> Result<[UInt8], HTTPFetch.Failure> {
        HTTPFetch.get(url, timeout: fetchTimeout, limit: sizeLimit).flatMap { reply in
            (200..<300).contains(reply.status)
                ? .success(reply.body) : .failure(HTTPFetch.Failure(description: "HTTP status \(reply.status)"))
        }
    }

    /// Until when a document fetched at `fetchedAt` is used: its `valid_until` when that was
    /// ahead of the fetch, else `Rules.refresh` after it.
    func expiry(validUntil: Timestamp?, fetchedAt: Timestamp) -> Timestamp {
        if let validUntil, validUntil > fetchedAt { return validUntil }
        return fetchedAt.adding(seconds: settings.refresh)
    }
}
