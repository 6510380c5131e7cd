import BeaconCore
import GPSD
import Testing

/// docs/behaviour.md §17: the part of gpsd's JSON protocol beaconwatch reads, and `Monitor.position`.
@Suite struct GPSDTests {
    static func parse(_ line: String) -> Result<GPSD.Report, TraceLineError> { GPSD.parse(Array(line.utf8)) }

    @Test func aTPVWithAFixIsAPositionWithEphAsItsAccuracy() throws {
        // As gpsd 3.22 reported the drive's first RMC under gpsfake.
        let line =
            #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2026-09-15T08:00:00.000Z","ept":0.005,"lat":48.865634500,"lon":2.321965083,"altHAE":82.0000,"track":14.0000,"speed":15.022,"eph":15.200}"#
        #expect(
            try Self.parse(line).get() == .fix(Position(latitude: 48.8656345, longitude: 2.321965083, accuracy: 15.2)))
    }

    @Test func withoutEphTheLargerOfEpxAndEpyIsTheAccuracy() throws {
        let line = #"{"class":"TPV","mode":2,"lat":1,"lon":2,"epx":7.5,"epy":12}"#
        #expect(try Self.parse(line).get() == .fix(Position(latitude: 1, longitude: 2, accuracy: 12)))
        let bare = #"{"class":"TPV","mode":2,"lat":1,"lon":2}"#
        #expect(try Self.parse(bare).get() == .fix(Position(latitude: 1, longitude: 2, accuracy: nil)))
    }

    @Test func noFixAndOtherClassesAreNothingToDo() throws {
        #expect(try Self.parse(#"{"class":"TPV","mode":1}"#).get() == .noFix)
        #expect(try Self.parse(#"{"class":"TPV","mode":0,"lat":1,"lon":1}"#).get() == .noFix)
        #expect(try Self.parse(#"{"class":"VERSION","release":"3.22","proto_major":3}"#).get() == .other("VERSION"))
        #expect(try Self.parse(#"{"class":"SKY","satellites":[]}"#).get() == .other("SKY"))
    }

    @Test(arguments: [
        ("", "not a JSON object"),
        ("$GPGGA,080000.00,4851.938070,N", "not a JSON object"),
        (#"{"mode":3}"#, "no \"class\""),
        (#"{"class":"TPV"}"#, "\"mode\""),
        (#"{"class":"TPV","mode":7,"lat":1,"lon":1}"#, "\"mode\""),
        (#"{"class":"TPV","mode":3,"lat":1}"#, "\"lat\" and \"lon\""),
        (#"{"class":"TPV","mode":3,"lat":95,"lon":1}"#, "\"lat\" and \"lon\""),
        (#"{"class":"TPV","mode":3,"lat":1,"lon":"2"}"#, "\"lat\" and \"lon\""),
        (#"{"class":"TPV","mode":3,"lat":1,"lon":2,"eph":-3}"#, "metres"),
        (#"{"class":"TPV","mode":3,"lat":1,"lon":2,"epx":"x"}"#, "metres"),
    ])
    func malformedReportsAreOneLineEach(line: String, reason: String) {
        guard case .failure(let error) = Self.parse(line) else {
            Issue.record("accepted: \(line)")
            return
        }
        #expect(error.description.contains(reason), "\(error)")
        #expect(!error.description.contains("\n"))
    }

    @Test func mutatedReportsNeverCrashTheParser() {
        var random = SeededGenerator(seed: 3)
        let line = Array(#"{"class":"TPV","mode":3,"lat":48.8,"lon":2.3,"eph":15.2,"epx":3,"epy":4}"#.utf8)
        for _ in 0..<20_000 {
            var bytes = line
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            if case .success(.fix(let position)) = GPSD.parse(bytes) {
                #expect((-90...90).contains(position.latitude) && (-180...180).contains(position.longitude))
                #expect(position.accuracy.map { $0 >= 0 && $0.isFinite } ?? true)
            }
        }
    }

    @Test func linesAreSplitAcrossReadsAndAnOverlongOneIsSkipped() {
        var buffer = GPSD.LineBuffer()
        var lines: [String?] = []
        let take: ([UInt8]?) -> Void = { lines.append($0.map { String(decoding: $0, as: UTF8.self) }) }
        buffer.append(Array(#"{"class":"VER"#.utf8), take)
        buffer.append(Array("SION\"}\r\n{\"a\"".utf8), take)
        buffer.append(Array(":1}\n".utf8), take)
        #expect(lines == [#"{"class":"VERSION"}"#, #"{"a":1}"#])
        lines = []
        buffer.append([UInt8](repeating: 0x41, count: GPSD.maximumLineLength + 10), take)
        buffer.append(Array("AAA\nok\n".utf8), take)
        #expect(lines == [nil, "ok"])
    }

    @Test func positionSourcesAreGpsdHostPort() {
        #expect(GPSDEndpoint("gpsd:localhost:2947") == GPSDEndpoint(host: "localhost", port: 2947))
        #expect(GPSDEndpoint("gpsd:[::1]:2947") == GPSDEndpoint(host: "::1", port: 2947))
        #expect(GPSDEndpoint("gpsd:[::1]:2947")?.description == "gpsd:[::1]:2947")
        for bad in [
            "gpsd:localhost", "gpsd::2947", "gpsd:host:0", "gpsd:host:70000", "localhost:2947", "gpsd:a b:1", "",
        ] {
            #expect(GPSDEndpoint(bad) == nil, "\(bad)")
        }
    }
}
