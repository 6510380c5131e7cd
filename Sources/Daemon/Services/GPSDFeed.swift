import BeaconCore
import GPSD
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import Syscalls

/// `Monitor.position = gpsd:HOST:PORT` (docs/behaviour.md §17): a client of gpsd's JSON protocol that hands
/// every TPV fix (mode ≥ 2) to the engine, taken at the daemon's clock when it arrives.
///
/// It sends `?WATCH={"enable":true,"json":true}` once connected and reads report lines. When gpsd
/// is not there, or goes away, it tries again after 1 s, doubling to 60 s (``ReconnectBackoff``),
/// and says so once per outage; a malformed report is one log line and is ignored.
package struct GPSDFeed: Service {
    let endpoint: GPSDEndpoint
    let post: @Sendable (Position) -> Void
    let logger: Logger
    /// Where the backoff between attempts is slept.
    let timers: ShellTimers

    package init(
        endpoint: GPSDEndpoint, logger: Logger, timers: ShellTimers = .shared,
        post: @escaping @Sendable (Position) -> Void
    ) {
        self.endpoint = endpoint
        self.timers = timers
        self.logger = logger
        self.post = post
    }

    package func run() async throws {
        var backoff = ReconnectBackoff()
        var outage = false
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let problem: String
            let connected = Atomic(false)
            do {
                try await cancelWhenGracefulShutdown { try await session(connected: connected) }
                problem = "closed the connection"
            } catch is CancellationError {
                return
            } catch {
                problem = connected.load(ordering: .relaxed) ? "went away (\(error))" : "cannot be reached (\(error))"
            }
            if connected.load(ordering: .relaxed) {
                backoff.reset()
                outage = false
            }
            guard !Task.isCancelled, !Task.isShuttingDownGracefully else { return }
            if !outage {
                logger.warning(
                    "\(endpoint) \(problem); positions resume when gpsd is back (retrying with backoff up to 60 s)")
                outage = true
            }
            let wait = backoff.next()
            try? await cancelWhenGracefulShutdown { try await timers.sleep(for: wait) }
        }
    }

    /// One connection, until gpsd closes it; `connected` is set once gpsd has accepted it.
    private func session(connected: borrowing Atomic<Bool>) async throws {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(5))
            .connect(host: endpoint.host, port: Int(endpoint.port)) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        connected.store(true, ordering: .relaxed)
        logger.info("gpsd connected", metadata: ["endpoint": "\(endpoint)"])
        try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: GPSD.watch))
            var lines = GPSD.LineBuffer()
            for try await buffer in inbound {
                lines.append(buffer.readableBytesView) { line in
                    guard let line else {
                        logger.warning("\(endpoint): ignored a report over 64 KiB")
                        return
                    }
                    guard !line.isEmpty else { return }
                    switch GPSD.parse(line) {
                    case .success(.fix(let position)): post(position)
                    case .success(.other("WATCH")):
                        // gpsd has opened its devices for us: fixes flow from here.
                        logger.info("gpsd watching", metadata: ["endpoint": "\(endpoint)"])
                    case .success(.noFix), .success(.other): break
                    case .failure(let error): logger.warning("\(endpoint): ignored a report: \(error)")
                    }
                }
            }
        }
    }
}
