import Foundation

/// Reads a pipe from a child process on a thread of its own until end of file, handing each chunk
/// to `chunk` and then an empty one: blocking reads, no dispatch source. (A `readabilityHandler`
/// registers the descriptor with libdispatch, and a descriptor closed before that source's
/// cancellation completes can take libdispatch's event thread down: a loaded run of the suite
/// crashed once there, with signal 11, in `_dispatch_event_loop_drain`.)
package func readUntilEnd(
    _ handle: FileHandle, name: String = "pipe reader", _ chunk: @escaping @Sendable (Data) -> Void
) {
    let box = UncheckedHandle(handle)
    let thread = Thread {
        while true {
            let data = box.handle.availableData
            chunk(data)
            if data.isEmpty { return }
        }
    }
    thread.name = name
    thread.start()
}

/// A FileHandle handed to the one thread that reads it.
private struct UncheckedHandle: @unchecked Sendable {
    let handle: FileHandle
    init(_ handle: FileHandle) { self.handle = handle }
}
