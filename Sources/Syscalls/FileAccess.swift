#if canImport(Glibc)
    import Glibc
#endif

/// What this process may do with a path, asked before the path is used, so that `check` and a
/// starting daemon can name the cause ("cannot be read by user beaconwatch") instead of the
/// error of whatever library opens it later.
///
/// Each question answers `nil` when all is well, else the reason in words that finish
/// "PATH …" (`"does not exist"`, `"is a folder, not a file"`). Answers are for the effective
/// user: root may read and write anything, but runs only what has an execute bit.
package enum FileAccess {
    /// Why the regular file at `path` cannot be read, or `nil`.
    package static func unreadable(_ path: String) -> String? {
        switch kind(of: path) {
        case .missing(let reason): return reason
        case .folder: return "is a folder, not a file"
        case .other: return denied(path, R_OK, "cannot be read by user \(userName)")
        }
    }

    /// Why the program at `path` cannot be started (missing, a folder, no execute bit, or a
    /// script its interpreter cannot read), or `nil`.
    package static func notRunnable(_ path: String) -> String? {
        switch kind(of: path) {
        case .missing(let reason): return reason
        case .folder: return "is a folder, not a program"
        case .other:
            return denied(path, X_OK, "is not executable by user \(userName); chmod +x it")
                ?? denied(path, R_OK, "cannot be read by user \(userName) (a script is read by its interpreter)")
        }
    }

    /// Why a file at `path` (a database, with `-wal` and `-shm` files beside it) cannot be
    /// created or written, creating the folders on the way; `nil` when it can.
    package static func unwritable(_ path: String) -> String? {
        let folder = parent(of: path)
        switch kind(of: path) {
        case .folder:
            return "is a folder, not a file"
        case .other:
            return denied(path, W_OK, "cannot be written by user \(userName)")
                ?? denied(
                    folder, W_OK | X_OK,
                    "is in \(folder), which user \(userName) cannot write (SQLite keeps files beside it)")
        case .missing(let reason) where reason != absent:
            return reason
        case .missing:
            // The nearest folder that exists must let this user make what is missing below it.
            var existing = folder
            while case .missing = kind(of: existing), existing != "/", existing != "." {
                existing = parent(of: existing)
            }
            switch kind(of: existing) {
            case .missing(let reason): return "cannot be made: \(existing) \(reason)"
            case .other: return "cannot be made: \(existing) is not a folder"
            case .folder:
                return denied(existing, W_OK | X_OK, "user \(userName) cannot write in \(existing)").map {
                    "cannot be made: \($0)"
                }
            }
        }
    }

    /// `nil` when `access(2)` grants `mode` on `path`; else `refusal`, or what the kernel said
    /// when the cause is not permissions (a read-only file system).
    private static func denied(_ path: String, _ mode: Int32, _ refusal: String) -> String? {
        guard access(path, mode) != 0 else { return nil }
        switch errno {
        case EACCES, EPERM: return refusal
        case EROFS: return "is on a read-only file system"
        default: return "cannot be used: \(String(cString: strerror(errno)))"
        }
    }

    /// The name of the effective user, else its number.
    package static var userName: String {
        let uid = geteuid()
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "#\(uid)" }
        return String(cString: name)
    }

    private enum Kind { case folder, other, missing(String) }

    private static let absent = "does not exist"

    private static func kind(of path: String) -> Kind {
        var status = stat()
        guard stat(path, &status) == 0 else {
            switch errno {
            case ENOENT, ENOTDIR: return .missing(absent)
            case EACCES: return .missing("cannot be reached by user \(userName) (a folder on the way is closed to it)")
            default: return .missing("cannot be looked at: \(String(cString: strerror(errno)))")
            }
        }
        return status.st_mode & S_IFMT == S_IFDIR ? .folder : .other
    }

    /// The folder `path` is in: `.` for a bare name, `/` for a name at the root.
    private static func parent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }
}
