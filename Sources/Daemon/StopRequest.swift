import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// SIGINT and SIGTERM ask a live loop to stop; the loop checks at least every second and then
/// undoes what it set up (scan or advertising disabled, HCI filter restored).
public enum StopRequest {
    private static let requested = Atomic<Bool>(false)

    /// Installs the handlers (once is enough).
    public static func install() {
        signal(SIGINT, stopSignalHandler)
        signal(SIGTERM, stopSignalHandler)
    }

    public static var isRequested: Bool { requested.load(ordering: .relaxed) }

    static func request() { requested.store(true, ordering: .relaxed) }
}

private func stopSignalHandler(_: Int32) {
    StopRequest.request()
}
