import Logging
import BeaconCore
import BeaconConfiguration
import Engine
import Foundation
import Persistence
import RegionMonitor
import Rules
import Syscalls

/// Reads `Rules.source` (docs/behaviour.md §7.1) or `Rules.geofences` (docs/behaviour.md §17): a u_beacons.json or
/// u_geofences.json file, or an http(s) URL fetched with the Ubudu query parameters, kept in the
/// state database and used until `valid_until` (or `Rules.refresh`); when a fetch fails, the kept
/// copy stays in force.
package struct RulesSource: Sendable {
    /// Which of the two documents.
    package enum Kind: Sendable, Hashable {
        /// `Rules.source`: u_beacons.json.
        case beacons
        /// `Rules.geofences`: u_geofences.json, its radii in the unit given.
        case geofences(GeofenceRadiusUnit)
    }

    /// A document fetch gives up after this long.
    package static let fetchTimeout = 30.0
    /// A rules document larger than this is refused.
    package static let sizeLimit = 16 << 20
    /// Never fetch more often than this, whatever `valid_until` says.
    package static let shortestRefresh = 60.0

    /// What was read, and from where.
    package struct Loaded: Sendable {
        package var regions: [RuleRegion]
        /// When to fetch again (URL sources).
        package var expires: Timestamp?
        /// `file`, `fetched`, or the kept copy, for the log.
        package var origin: String
    }

    package let settings: RulesSettings
    package let values: TemplateValues
    package let kind: Kind
    let hierarchy: Hierarchy

    package init(configuration: Configuration, values: TemplateValues, kind: Kind = .beacons) {
        settings = configuration.rules
        hierarchy = configuration.hierarchy
        self.values = values
        self.kind = kind
    }

    /// The source of `configuration`, with its resolved template values (`Monitor.udid` defaults
    /// to /etc/machine-id).
    package init(configuration: Configuration, kind: Kind = .beacons) {
        self.init(configuration: configuration, values: RuleSettings.resolve(configuration).values, kind: kind)
    }

    /// The geofences source of `configuration` (`Rules.geofences`).
    package static func geofences(of configuration: Configuration) -> RulesSource {
        RulesSource(configuration: configuration, kind: .geofences(configuration.rules.geofenceRadiusUnit))
    }

    /// The key that names this source: `Rules.source` or `Rules.geofences`.
    package var key: String { kind == .beacons ? "Rules.source" : "Rules.geofences" }

    /// Where this source reads from; `nil` when it is not set.
    package var location: RulesSettings.Source? { kind == .beacons ? settings.source : settings.geofences }

    /// Parses a document of this source's kind.
    package func parse(_ bytes: [UInt8], name: String) -> Result<RulesDocument, RulesError> {
        switch kind {
        case .beacons: RulesDocument.load(bytes, name: name)
        case .geofences(let unit): GeofencesDocument.load(bytes, name: name, unit: unit)
        }
    }

    /// The kept copy's key in the state database: the URL, marked for geofences.
    func cacheKey(_ url: URL) -> String {
        kind == .beacons ? url.absoluteString : "geofences " + url.absoluteString
    }

    /// ``load(store:now:fetchKeptCopy:warn:)``, then a warning for what each region loaded
    /// untidily and for each region that attaches to no configured region.
    package func loadWarning(store: StateStore, now: Timestamp, fetchKeptCopy: Bool = false, logger: Logger)
        throws -> Loaded?
    {
        guard let loaded = try load(store: store, now: now, fetchKeptCopy: fetchKeptCopy, logger: logger) else {
            return nil
        }
        for region in loaded.regions {
            for warning in region.warnings { logger.warning("\(key) region \(region.id): \(warning)") }
            if region.geofence == nil, region.attachment(in: hierarchy) == nil {
                logger.warning(
                    "Rules.source region \(region.id) (\(region.pattern)) matches no configured Area, Zone or Beacon; its rules never fire"
                )
            }
        }
        return loaded
    }

    /// Both documents of `configuration`, each read as ``loadWarning(store:now:fetchKeptCopy:warn:)``
    /// reads it: the regions of `Rules.source` then the geofences of `Rules.geofences` (`nil` when
    /// neither is set), and each source that was read with what it gave (a URL one is refreshed).
    package static func loadAll(
        configuration: Configuration, store: StateStore, now: Timestamp, logger: Logger
    ) throws -> (regions: [RuleRegion]?, sources: [(RulesSource, Loaded)]) {
        var regions: [RuleRegion]?
        var sources: [(RulesSource, Loaded)] = []
        for source in [RulesSource(configuration: configuration), .geofences(of: configuration)] {
            guard let loaded = try source.loadWarning(store: store, now: now, logger: logger) else { continue }
            regions = (regions ?? []) + loaded.regions
            sources.append((source, loaded))
        }
        return (regions, sources)
    }

    /// The engine input that hands a refreshed document of this source over.
    package func input(_ regions: [RuleRegion]) -> EngineInput {
        kind == .beacons ? .rules(regions) : .geofences(regions)
    }

    /// The URL as requested: the source with `api_version=2`, `namespace`, `udid`, `lat`, `lgn`
    /// (sic) added to its query (the known ones).
    package func requestURL(_ url: URL) -> URL {
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
    package func load(store: StateStore, now: Timestamp, fetchKeptCopy: Bool = false, logger: Logger) throws
        -> Loaded?
    {
        switch location {
        case nil:
            return nil
        case .file(let path):
            let bytes = try Self.readFile(path, check: "check \(key) names an existing file").get()
            switch parse(bytes, name: path) {
            case .success(let document): return Loaded(regions: document.regions, expires: nil, origin: "file")
            case .failure(let error):
                throw InputError(file: path, message: error.detail(after: path))
            }
        case .url(let url):
            let kept = try store.cachedRules(source: cacheKey(url))
            var keptDocument: RulesDocument?
            if let kept, case .success(let document) = parse(kept.document, name: "kept copy") {
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
                try store.cacheRules(source: cacheKey(url), document: bytes, fetchedAt: now)
                return Loaded(
                    regions: document.regions,
                    expires: max(
                        expiry(validUntil: document.validUntil, fetchedAt: now),
                        now.adding(seconds: Self.shortestRefresh)),
                    origin: "fetched")
            case .failure(let why):
                let retry = now.adding(seconds: max(Self.shortestRefresh, min(settings.refresh, 600)))
                if let keptDocument, let kept {
                    logger.warning(
                        "\(key) \(url.absoluteString): \(why); the copy fetched \(kept.fetchedAt.iso8601) stays in force"
                    )
                    return Loaded(
                        regions: keptDocument.regions, expires: retry,
                        origin: "kept copy fetched \(kept.fetchedAt.iso8601)")
                }
                logger.warning(
                    "\(key) \(url.absoluteString): \(why); no copy is kept yet, so no rules apply until a fetch succeeds"
                )
                return Loaded(regions: [], expires: retry, origin: "nothing (fetch failed)")
            }
        }
    }

    /// The rules document at `path`, within ``sizeLimit``; a failure names the file, the cause and
    /// `check`, what to do.
    package static func readFile(_ path: String, check: String) -> Result<[UInt8], InputError> {
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
            switch parse(bytes, name: "reply") {
            case .success(let document): .success((bytes, document))
            case .failure(let error): .failure(HTTPFetch.Failure(description: error.message))
            }
        }
    }

    /// The body of a 2xx reply to a GET of `url` (as it is: ``requestURL(_:)`` adds the query).
    package func download(_ url: URL) -> Result<[UInt8], HTTPFetch.Failure> {
        Self.download(url)
    }

    /// The body of a 2xx reply to a GET of `url`, within ``fetchTimeout`` and ``sizeLimit``.
    package static func download(_ url: URL) -> Result<[UInt8], HTTPFetch.Failure> {
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
