import Foundation
import PackagePlugin

/// Writes `BuildInfo.swift` (`BuildInfo.commit`) before each build of the target it is applied
/// to: the checkout's commit, with `+` when tracked files were changed, or `unknown` outside a git
/// checkout (a source tarball). `beaconwatch --version` shows it (docs/behaviour.md §11). The file is rewritten
/// only when its text changes, so an unchanged commit compiles nothing again.
@main struct BuildInfo: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let folder = context.pluginWorkDirectoryURL.appending(path: "generated")
        let script = #"""
            commit=$(git -C "$1" rev-parse --short=12 HEAD 2>/dev/null) || commit=unknown
            if [ "$commit" != unknown ] && [ -n "$(git -C "$1" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
                commit="$commit+"
            fi
            mkdir -p "$2"
            text="/// Written by the BuildInfo plugin at build time.
            enum BuildInfo { static let commit = \"$commit\" }"
            [ "$(cat "$2/BuildInfo.swift" 2>/dev/null)" = "$text" ] || printf '%s\n' "$text" > "$2/BuildInfo.swift"
            """#
        return [
            .prebuildCommand(
                displayName: "BuildInfo: the checkout's commit",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", script, "sh", context.package.directoryURL.path, folder.path],
                outputFilesDirectory: folder)
        ]
    }
}
