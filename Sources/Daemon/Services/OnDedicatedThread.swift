import Foundation

/// Runs blocking work (file reading, a radio, stopping libmosquitto's thread) on its own thread,
/// off the cooperative pool.
public func onDedicatedThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        // Blocking work must not hold a thread of the cooperative pool.
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
