import BlueZ
import Glibc
import Testing

@Suite struct BluetoothUnavailableTests {
    @Test(arguments: [
        (EAFNOSUPPORT, BluetoothUnavailable.noKernelSupport),
        (EPROTONOSUPPORT, .noKernelSupport),
        (ENODEV, .noSuchAdapter("hci3")),
        (ENETDOWN, .adapterDown("hci3")),
        (EPERM, .permissionDenied("hci3")),
        (EACCES, .permissionDenied("hci3")),
    ])
    func errnoMapsToItsPlainWordsFailure(code: Int32, expected: BluetoothUnavailable) {
        #expect(BluetoothUnavailable.from(errno: code, adapter: "hci3") == expected)
    }

    @Test(arguments: [ENODEV, ENETDOWN, EPIPE, EBADFD])
    func anAdapterGoingAwayWhileInUseIsItsOwnFailure(code: Int32) {
        #expect(BluetoothUnavailable.from(errno: code, adapter: "hci1", whileRunning: true) == .adapterRemoved("hci1"))
        #expect(BluetoothUnavailable.adapterRemoved("hci1").description.contains("retrying every 3 s"))
    }

    @Test func otherErrorsKeepTheirErrnoAndText() {
        #expect(
            BluetoothUnavailable.from(errno: EIO, adapter: "hci1").description
                == "cannot use Bluetooth adapter hci1: Input/output error (errno 5)")
    }

    @Test func everyMessageIsOneLineWithAFix() {
        let all: [BluetoothUnavailable] = [
            .noKernelSupport, .noSuchAdapter("hci3"), .adapterDown("hci3"), .permissionDenied("hci3"),
            .adapterRemoved("hci3"),
            .from(errno: EIO, adapter: "hci3"),
            .line("uart:/dev/ttyACM0", "cannot open /dev/ttyACM0: gone; plug it in"),
            .lineLost("h4tcp:192.0.2.1:9001", reason: "closed the line"),
        ]
        for failure in all {
            #expect(!failure.description.contains("\n"))
        }
        #expect(BluetoothUnavailable.permissionDenied("hci0").description.contains("CAP_NET_RAW"))
        #expect(BluetoothUnavailable.adapterDown("hci0").description.contains("hciconfig hci0 up"))
    }

    @Test func openingAnAdapterHereFailsInPlainWords() {
        // No adapter hci97 exists on any test machine; without kernel support, that is said first.
        #expect(throws: BluetoothUnavailable.self) { try HCISocket.checkAvailable(adapter: "hci97") }
    }
}
