import BeaconConfiguration
import CoreMetrics
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle

/// The web view of a cluster's standby (docs/behaviour.md §21): `/healthz` is healthy and says
/// `standby`, `/metrics` has `beaconwatch_cluster_active 0` and how far the standby follows; every
/// other path says where the building is shown (the active's web view). `Web.token` guards it as it
/// guards the full view. Runs until the daemon becomes the active, whose full view then takes the
/// address.
struct StandbyWeb: Sendable {
    let settings: WebSettings
    let link: ClusterLink
    let logger: Logger
    let bound: @Sendable (Int) -> Void

    /// Serves until `stop` returns, then shuts the server down gracefully (cancelling it is what
    /// Hummingbird logs as errors).
    func run(until stop: @escaping @Sendable () async -> Void) async {
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .warning)
        let (settings, bound, logger) = (settings, bound, logger)
        let app = Application(
            responder: StandbyResponder(link: link, token: settings.token),
            configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: nil),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? settings.port
                var shown = settings
                shown.port = port
                logger.notice("standby web view at http://\(shown.authority)/ (/healthz, /metrics)")
                bound(port)
            },
            logger: quiet)
        let group = ServiceGroup(configuration: .init(services: [app], logger: quiet))
        await withTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                do { try await group.run() } catch {
                    logger.warning("standby web view not served at \(settings.authority): \(WebService.reason(error))")
                }
            }
            await stop()
            await group.triggerGracefulShutdown()
            await tasks.waitForAll()
        }
    }
}

struct StandbyResponder: HTTPResponder {
    typealias Context = BasicRequestContext
    let link: ClusterLink
    let token: String?

    func respond(to request: Request, context: Context) async throws -> Response {
        if let token {
            let header = request.headers[.authorization] ?? ""
            let cookie = request.cookies[WebResponder.cookie]?.value
            let query = request.uri.queryParameters["token"].map(String.init)
            let given = header.hasPrefix("Bearer ") ? String(header.dropFirst(7)) : cookie ?? query ?? ""
            guard WebResponder.same(given, token) else {
                return WebResponder.error(.unauthorized, "send Authorization: Bearer <Web.token>", bearer: true)
            }
        }
        switch request.uri.path {
        case "/healthz":
            return WebResponder.text(link.isActive ? "ok\n" : "standby\n")
        case "/metrics":
            return WebResponder.text(metrics(), type: "text/plain; version=0.0.4; charset=utf-8")
        default:
            return WebResponder.error(
                .serviceUnavailable,
                "this daemon is the cluster's standby (\(link.member)); the active's web view shows the building")
        }
    }

    func metrics() -> String {
        let registry = PrometheusCollectorRegistry()
        let factory = PrometheusMetricsFactory(registry: registry)
        let following = link.following
        CoreMetrics.Gauge(label: "beaconwatch_cluster_active", factory: factory).record(link.isActive ? 1 : 0)
        CoreMetrics.Counter(label: "beaconwatch_cluster_steps_applied_total", factory: factory).increment(
            by: Int64(following?.applied ?? 0))
        CoreMetrics.Counter(label: "beaconwatch_cluster_snapshots_restored_total", factory: factory).increment(
            by: Int64(following?.restored ?? 0))
        CoreMetrics.Gauge(label: "beaconwatch_cluster_awaiting_snapshot", factory: factory).record(
            following?.awaitingSnapshot == true ? 1 : 0)
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }
}
