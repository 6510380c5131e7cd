import BeaconCore
import CMosquitto
import Foundation
import Synchronization
import Syscalls

#if canImport(Glibc)
    import Glibc
#endif

/// The network thread of one libmosquitto handle (one ``MQTTClient/generation``): it polls the
/// socket, reads, writes and keeps the connection alive with libmosquitto's `loop_read`,
/// `loop_write` and `loop_misc`, and reconnects with ``ReconnectBackoff`` after a failure.
///
/// Publishing from other threads queues the message and calls ``wake()``: the first call since
/// the thread last looked writes to a pipe, later ones find it armed and do nothing, so a burst of
/// publications costs one wake-up, and the thread writes them all in one turn. Publications made
/// on the thread itself (from an acknowledgement's callback) need no wake-up at all: the thread
/// writes before it waits again.
///
/// The thread owns the handle once started: it destroys it, and lets go of the relay, as it ends.
final class NetworkLoop: Sendable {
    /// A libmosquitto handle: used only through libmosquitto's own locking from then on.
    struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private let mosq: Handle
    private let relay: MQTTClient.Relay
    private let wakeup: Wakeup
    /// A wake-up is written and not yet taken: further ones are not needed.
    private let armed = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    /// The thread's `pthread_t`, once it runs.
    private let thread = Atomic<UInt>(0)
    /// Signalled when the thread has ended.
    private let ended: Wakeup
    /// When a stopping thread gives up on its farewell.
    private let clock: DaemonClock
    /// How long a stopping thread keeps writing (its `DISCONNECT`) before it gives up.
    static let farewell = Duration.seconds(2)

    init(_ mosq: OpaquePointer, relay: MQTTClient.Relay, clock: DaemonClock) throws(SyscallError) {
        self.mosq = Handle(pointer: mosq)
        self.relay = relay
        self.clock = clock
        wakeup = try Wakeup()
        ended = try Wakeup()
    }

    /// Starts the thread. `connected`: the first attempt (made by the caller) is under way; if
    /// not, the next one is made after the first backoff.
    func start(connected: Bool) {
        let thread = Thread { [self] in run(connected: connected) }
        thread.name = "mqtt network"
        thread.start()
    }

    /// Tells the thread that something was queued for it to write.
    func wake() {
        guard thread.load(ordering: .relaxed) != UInt(bitPattern: Int(bitPattern: pthread_self())) else { return }
        if !armed.exchange(true, ordering: .acquiringAndReleasing) { wakeup.signal() }
    }

    /// Asks the thread to end (after writing what is queued, a `DISCONNECT` included, for up to
    /// ``farewell``) and waits for it up to `timeout`. Returns whether it ended.
    @discardableResult
    func stop(within timeout: Duration = .seconds(5)) -> Bool {
        stopping.store(true, ordering: .releasing)
        wakeup.signal()
        if thread.load(ordering: .relaxed) == UInt(bitPattern: Int(bitPattern: pthread_self())) { return false }
        return ended.wait(timeout: timeout)
    }

    private var success: Int32 { MOSQ_ERR_SUCCESS.rawValue }

    private func run(connected: Bool) {
        thread.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .relaxed)
        let mosq = mosq.pointer
        var backoff = ReconnectBackoff()
        // A failure was said (as a `disconnected` event) since the last accepted connection.
        var said = !connected
        var waiting: Duration? = connected ? nil : backoff.next()
        var stopBy: Duration?
        while true {
            if stopping.load(ordering: .acquiring) {
                let now = clock.elapsed()
                if stopBy == nil { stopBy = now + Self.farewell }
                if waiting != nil || mosquitto_socket(mosq) < 0 || stopBy.map({ now >= $0 }) ?? false { break }
            }
            if let delay = waiting {
                // Between attempts: only a stop ends the wait early.
                _ = try? Syscall.waitReadable([wakeup.descriptor], timeout: delay)
                take()
                if stopping.load(ordering: .acquiring) { break }
                waiting = nil
                let code = mosquitto_reconnect_async(mosq)
                if code != success {
                    if !said { relay.said(.disconnected(code: code)) }
                    said = true
                    waiting = backoff.next()
                }
                continue
            }
            let socket = mosquitto_socket(mosq)
            guard socket >= 0 else {
                // The connection ended (its callback said so): the next attempt after the backoff.
                waiting = backoff.next()
                continue
            }
            let wantWrite = mosquitto_want_write(mosq)
            var descriptors = [
                pollfd(fd: socket, events: Int16(POLLIN) | (wantWrite ? Int16(POLLOUT) : 0), revents: 0),
                pollfd(fd: wakeup.descriptor, events: Int16(POLLIN), revents: 0),
            ]
            // At least once a second for keep-alive (as libmosquitto's own loop).
            _ = try? Syscall.retrying("poll") { Int(poll(&descriptors, 2, 1000)) }
            let failed = descriptors[0].revents & Int16(POLLERR | POLLHUP) != 0
            var write = failed || descriptors[0].revents & Int16(POLLOUT) != 0
            if descriptors[1].revents != 0 {
                take()
                write = true
            }
            if failed || descriptors[0].revents & Int16(POLLIN) != 0 {
                guard mosquitto_loop_read(mosq, 1) == success, mosquitto_socket(mosq) >= 0 else { continue }
            }
            if relay.accepted.exchange(false, ordering: .relaxed) {
                backoff.reset()
                said = false
            }
            // Acknowledgements read above may have queued the next publications.
            if write || mosquitto_want_write(mosq) {
                guard mosquitto_loop_write(mosq, 1) == success, mosquitto_socket(mosq) >= 0 else { continue }
            }
            _ = mosquitto_loop_misc(mosq)
        }
        mosquitto_destroy(mosq)
        Unmanaged.passUnretained(relay).release()
        ended.signal()
    }

    /// Takes the pending wake-up: publications after this wake the thread again.
    private func take() {
        // Emptied first: a publisher that finds the flag still set has queued before the write
        // that follows this, and the next one after the reset writes a fresh wake-up.
        wakeup.clear()
        armed.store(false, ordering: .sequentiallyConsistent)
    }
}
