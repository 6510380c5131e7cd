import BeaconConfiguration
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import Syscalls

/// The web view and HTTP API as a service of the daemon's group (docs/behaviour.md §16): a
/// Hummingbird server, a reading of the engines every second while advertisements or outputs come
/// (the RSSI charts; less often when nothing happens), and a keep-alive to every event client every
/// 15 s (which finds the ones that vanished). A graceful shutdown ends every event stream first, so
/// the server's own shutdown does not wait for them.
package struct WebService: Service {
    let settings: WebSettings
    let responder: WebResponder
    let logger: Logger
    let bound: @Sendable (Int) -> Void

    /// Serves `responder` where `settings` say; `bound` is told the port once it listens (the one
    /// the system chose for port 0).
    package init(
        settings: WebSettings, responder: WebResponder, logger: Logger,
        bound: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.settings = settings
        self.responder = responder
        self.logger = logger
        self.bound = bound
    }

    static let samplePeriod = Duration.seconds(1)
    /// How long a stopping server may take to close its connections before it is cancelled.
    static let shutdownLimit = Duration.seconds(2)

    /// The tasks of a running web view: which one ended.
    enum Child: Sendable { case server, sampler, deadline }
    static let keepAlivePeriod = Duration.seconds(15)

    /// What the server got to: listening, and whether the daemon is shutting down.
    final class Progress: Sendable {
        let listening = Atomic(false)
        let stopping = Atomic(false)
    }

    package func run() async throws {
        let (settings, logger, bound, state) = (settings, logger, bound, responder.state)
        let progress = Progress()
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .warning)
        let app = Application(
            responder: responder,
            configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: nil),
            onServerRunning: { channel in
                progress.listening.store(true, ordering: .relaxed)
                let port = channel.localAddress?.port ?? settings.port
                var shown = settings
                shown.port = port
                logger.notice("web view at http://\(shown.authority)/")
                bound(port)
            },
            logger: quiet)
        try await withGracefulShutdownHandler {
            try await withThrowingTaskGroup(of: Child.self) { group in
                group.addTask {
                    do {
                        try await app.run()
                    } catch  where progress.stopping.load(ordering: .relaxed) || Task.isCancelled {
                        // The server stopping with the daemon is not a failure of the run.
                        return .server
                    } catch  where !settings.explicit && !progress.listening.load(ordering: .relaxed) {
                        // The default address was taken between the daemon's look and its bind
                        // (another daemon starting at the same moment): it runs without its web
                        // view, as when the look finds it taken (docs/behaviour.md §16).
                        let reason = Self.reason(error)
                        logger.warning(
                            "web view not started: \(settings.authority) \(reason); set Web.listen to another address (empty turns it off)"
                        )
                        return .server
                    }
                    return .server
                }
                // Child task: readings for the charts and the keep-alives, until cancelled.
                group.addTask {
                    var sinceKeepAlive = Duration.zero
                    while !Task.isCancelled, !state.engineEnded, !progress.stopping.load(ordering: .relaxed) {
                        // Every second while anything happens; when nothing did, less and less
                        // often, down to every 15 s (outputs and page requests read at once anyway).
                        let period = min(Self.samplePeriod * (1 << min(state.quietReadings, 4)), Self.keepAlivePeriod)
                        do {
                            try await cancelWhenGracefulShutdown { try await state.timers.sleep(for: period) }
                        } catch {
                            return .sampler
                        }
                        _ = await state.current(maxAge: Self.samplePeriod / 2)
                        sinceKeepAlive += period
                        if sinceKeepAlive >= Self.keepAlivePeriod {
                            state.hub.keepAlive()
                            sinceKeepAlive = .zero
                        }
                    }
                    // The engine has ended (a file's end): nothing more to read, but the server
                    // stays up until the daemon stops it: a service that returns while the group
                    // stops another is a failure to swift-service-lifecycle (exit 1).
                    try? await gracefulShutdown()
                    return .sampler
                }
                // The sampler ends at the daemon's stop: the server then ends by its own graceful
                // shutdown (its connections closed, the event streams ended by the hub), given
                // ``shutdownLimit``; cancelling it instead is what Hummingbird logs as errors.
                if try await group.next() == .sampler {
                    group.addTask {
                        try? await state.timers.sleep(for: Self.shutdownLimit)
                        return .deadline
                    }
                    _ = try await group.next()
                }
                group.cancelAll()
            }
        } onGracefulShutdown: {
            progress.stopping.store(true, ordering: .relaxed)
            state.hub.close()
        }
    }

    /// The system's reason in an error from binding, e.g. `Address already in use`.
    static func reason(_ error: any Error) -> String {
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
        return "\(error)"
    }

    /// Whether `settings`' address can be bound now; the reason when not. The daemon asks before
    /// it starts, so that an explicit address that is taken stops it at once (exit 1) and the
    /// default one is given up with one warning.
    package static func bindProblem(_ settings: WebSettings) -> String? {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(settings.host, String(settings.port), &hints, &list)
        guard status == 0, let first = list else {
            return "cannot resolve \(settings.host): \(String(cString: gai_strerror(status)))"
        }
        defer { freeaddrinfo(list) }
        do throws(SyscallError) {
            let descriptor = Int32(
                try Syscall.once("socket") {
                    Int(socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol))
                })
            defer { Syscall.close(descriptor) }
            var yes: Int32 = 1
            setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
            try Syscall.once("bind") { Int(bind(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen)) }
            try Syscall.once("listen") { Int(listen(descriptor, 1)) }
            return nil
        } catch {
            return error.reason
        }
    }
}
