import Foundation
import Syscalls
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One HTTP request with a deadline and a size limit: the only place beaconwatch talks HTTP as a
/// client (the rules source, the rules' server hook, and `beaconwatch learn` to the running
/// daemon's API).
///
/// Blocking: call it from a thread of its own or from a shell that may wait (a file run). Only
/// http and https are requested, and redirects to anything else are not followed.
package enum HTTPFetch {
    /// A reply: its status and body.
    package struct Reply: Sendable, Hashable {
        package var status: Int
        package var body: [UInt8]
    }

    /// Why there is no reply, in words for the log.
    package struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        package var description: String
    }

    /// GETs `url`, giving up after `timeout` seconds in all, and as soon as the body passes
    /// `limit` bytes.
    package static func get(_ url: URL, timeout: Double, limit: Int) -> Result<Reply, Failure> {
        request("GET", url, timeout: timeout, limit: limit)
    }

    /// `method` on `url` with `headers` and `body`, as ``get(_:timeout:limit:)`` does: any status is
    /// a reply.
    package static func request(
        _ method: String, _ url: URL, headers: [String: String] = [:], body: [UInt8]? = nil, timeout: Double,
        limit: Int
    ) -> Result<Reply, Failure> {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return .failure(Failure(description: "only http and https URLs are fetched"))
        }
        guard let delegate = try? Collector(limit: limit) else {
            return .failure(Failure(description: "no descriptor for the wait is left (raise the open files limit)"))
        }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.setValue("beaconwatch", forHTTPHeaderField: "User-Agent")
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body { request.httpBody = Data(body) }
        let task = session.dataTask(with: request)
        task.resume()
        // Our own deadline too, a little after the session's: nothing waits longer than asked.
        let limitSeconds = timeout.isFinite ? min(max(timeout, 0), 86_400) : 86_400
        if !delegate.done.wait(timeout: .milliseconds(Int64(limitSeconds * 1000) + 500)) {
            task.cancel()
            return .failure(Failure(description: "no reply within \(seconds(timeout))"))
        }
        return delegate.result.withLock { $0 } ?? .failure(Failure(description: "no reply"))
    }

    static func seconds(_ value: Double) -> String {
        value.rounded() == value ? "\(Int(value)) s" : "\(value) s"
    }

    private final class Collector: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        // The session calls one delegate method at a time, on its own queue; `result` is read
        // only after `done`.
        let limit: Int
        /// Signalled when the transfer has ended, one way or another.
        let done: Wakeup
        let result = Mutex<Result<Reply, Failure>?>(nil)
        private let body = Mutex<[UInt8]>([])
        private let status = Mutex(0)
        private let tooLarge = Mutex(false)

        init(limit: Int) throws {
            self.limit = limit
            done = try Wakeup()
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
        ) {
            status.withLock { $0 = (response as? HTTPURLResponse)?.statusCode ?? 0 }
            if response.expectedContentLength > Int64(limit) {
                tooLarge.withLock { $0 = true }
                completionHandler(.cancel)
                return
            }
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            let over = body.withLock { body -> Bool in
                body += data
                return body.count > limit
            }
            if over {
                tooLarge.withLock { $0 = true }
                dataTask.cancel()
            }
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
        ) {
            let scheme = request.url?.scheme?.lowercased()
            completionHandler(scheme == "http" || scheme == "https" ? request : nil)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            let outcome: Result<Reply, Failure>
            if tooLarge.withLock({ $0 }) {
                outcome = .failure(Failure(description: "reply over \(limit / 1024) KiB"))
            } else if let error {
                outcome = .failure(Failure(description: HTTPFetch.describe(error)))
            } else {
                outcome = .success(Reply(status: status.withLock { $0 }, body: body.withLock { $0 }))
            }
            result.withLock { $0 = outcome }
            done.signal()
        }
    }

    static func describe(_ error: any Error) -> String {
        let code = (error as? URLError)?.code
        switch code {
        case .timedOut?: return "no reply in time"
        case .cannotConnectToHost?: return "connection refused"
        case .cannotFindHost?, .dnsLookupFailed?: return "host not found"
        case .notConnectedToInternet?, .networkConnectionLost?: return "network unreachable"
        default: return error.localizedDescription
        }
    }
}
