import BlueZ
import Foundation
import Syscalls
import Testing

/// What `check` asks of the machine: adapters in sysfs, and what this user may do with a path.
@Suite struct MachineChecksTests {
    static func folder(_ name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("beaconwatch-\(name)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func adaptersAreTheHciEntriesOfSysfsWithoutTheirConnections() throws {
        let sysfs = try Self.folder("sysfs")
        for entry in ["hci1", "hci0", "hci0:11", "rfkill3"] {
            try FileManager.default.createDirectory(
                at: sysfs.appendingPathComponent(entry), withIntermediateDirectories: true)
        }
        #expect(Adapters.names(sysfs: sysfs.path) == ["hci0", "hci1"])
        #expect(Adapters.absence(of: "hci0", sysfs: sysfs.path) == nil)
        let missing = try #require(Adapters.absence(of: "hci2", sysfs: sysfs.path))
        #expect(missing.hasPrefix("no Bluetooth adapter hci2 on this machine (present: hci0, hci1)"))
        let bare = try Self.folder("bare")
        #expect(Adapters.absence(of: "hci0", sysfs: bare.path)?.contains("(none is present)") == true)
        let gone = sysfs.appendingPathComponent("nowhere").path
        #expect(Adapters.names(sysfs: gone) == nil)
        #expect(Adapters.absence(of: "hci0", sysfs: gone)?.contains("no Bluetooth support") == true)
        #expect(Adapters.absence(of: "hci0", sysfs: gone)?.contains("Monitor.source = none") == true)
        #expect(missing.contains("Monitor.source = none"))
    }

    @Test func unreadableNamesMissingFoldersAndFilesThatAreNotFiles() throws {
        let folder = try Self.folder("read")
        let file = folder.appendingPathComponent("capture.btsnoop")
        try Data([1, 2, 3]).write(to: file)
        #expect(FileAccess.unreadable(file.path) == nil)
        #expect(FileAccess.unreadable(folder.appendingPathComponent("none").path) == "does not exist")
        #expect(FileAccess.unreadable(file.appendingPathComponent("below").path) == "does not exist")
        #expect(FileAccess.unreadable(folder.path) == "is a folder, not a file")
    }

    @Test func notRunnableNeedsAnExecuteBitAndAProgramNotAFolder() throws {
        let folder = try Self.folder("run")
        let script = folder.appendingPathComponent("enter")
        try Data("#!/bin/sh\nexit 0\n".utf8).write(to: script)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: script.path)
        #expect(FileAccess.notRunnable(script.path)?.hasPrefix("is not executable by user ") == true)
        #expect(FileAccess.notRunnable(script.path)?.hasSuffix("; chmod +x it") == true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        #expect(FileAccess.notRunnable(script.path) == nil)
        #expect(FileAccess.notRunnable(folder.path) == "is a folder, not a program")
        #expect(FileAccess.notRunnable(folder.appendingPathComponent("exit").path) == "does not exist")
    }

    @Test func unwritableLooksForTheNearestFolderThatExists() throws {
        let folder = try Self.folder("write")
        // Folders that do not exist yet are made by the state store: fine when their parent is.
        #expect(FileAccess.unwritable(folder.appendingPathComponent("a/b/state.sqlite").path) == nil)
        let file = folder.appendingPathComponent("plain")
        try Data().write(to: file)
        #expect(FileAccess.unwritable(file.path) == nil)
        #expect(
            FileAccess.unwritable(file.appendingPathComponent("x/state.sqlite").path)
                == "cannot be made: \(file.path) is not a folder")
        #expect(FileAccess.unwritable(folder.path) == "is a folder, not a file")
        #expect(FileAccess.unwritable("relative-name.sqlite") == nil)
        // Permission bits bind every user but root, who writes anywhere.
        let closed = folder.appendingPathComponent("closed")
        try FileManager.default.createDirectory(at: closed, withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: closed.path)
        let verdict = FileAccess.unwritable(closed.appendingPathComponent("state.sqlite").path)
        if geteuid() == 0 {
            #expect(verdict == nil)
        } else {
            #expect(verdict == "cannot be made: user \(FileAccess.userName) cannot write in \(closed.path)")
        }
    }
}
