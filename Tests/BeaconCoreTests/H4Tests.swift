import BeaconCore
import Testing

/// A controller beaconwatch owns on an H4 line (docs/behaviour.md §3.1): how the radio is named,
/// how the byte stream is cut into packets, and how the controller is taken over.
@Suite struct H4Tests {
    // MARK: Naming the radio

    @Test func radiosAreNamedAsTheSpecWritesThem() {
        #expect(Radio("hci0") == .hci("hci0"))
        #expect(Radio("uart:/dev/ttyACM0") == .uart(device: "/dev/ttyACM0", baud: 1_000_000))
        #expect(Radio("uart:/dev/ttyUSB0@115200") == .uart(device: "/dev/ttyUSB0", baud: 115_200))
        #expect(Radio("h4tcp:192.0.2.7:9001") == .h4tcp(host: "192.0.2.7", port: 9001))
        #expect(Radio("h4tcp:[::1]:9001") == .h4tcp(host: "::1", port: 9001))
        #expect(Radio("h4tcp:bridge.local:1") == .h4tcp(host: "bridge.local", port: 1))
        // The text form is the one a message and `check` print; the default rate is left out.
        #expect(Radio("uart:/dev/ttyACM0@1000000")?.description == "uart:/dev/ttyACM0")
        #expect(Radio("h4tcp:[::1]:9001")?.description == "h4tcp:[::1]:9001")
        #expect(SourceSpec("uart:/dev/ttyACM0@1000000") == .adapter("uart:/dev/ttyACM0"))
        #expect(SourceSpec("h4tcp:127.0.0.1:9001")?.radio == .h4tcp(host: "127.0.0.1", port: 9001))
        #expect(Radio("uart:/dev/ttyACM0")?.ownsController == true)
        #expect(Radio("hci1")?.ownsController == false)
    }

    @Test(arguments: [
        ("uart:", "names no serial device"),
        ("uart:@115200", "names no serial device"),
        ("uart:/dev/ttyACM0@12", "not a serial baud rate"),
        ("uart:/dev/ttyACM0@fast", "not a serial baud rate"),
        ("h4tcp:controller", "no port from 1 to 65535"),
        ("h4tcp:controller:0", "no port from 1 to 65535"),
        ("h4tcp:controller:70000", "no port from 1 to 65535"),
        ("h4tcp::9001", "names no host"),
        ("h4tcp:[]:9001", "names no host"),
        ("hci", "is not a radio"),
        ("hcix", "is not a radio"),
    ])
    func aMalformedRadioIsRefusedInOneLineThatSaysHowToWriteIt(text: String, words: String) throws {
        #expect(Radio(text) == nil)
        #expect(SourceSpec(text) == nil)
        let problem = try #require(Radio.problem(text))
        #expect(problem.contains(words), "\(problem)")
        #expect(!problem.contains("\n"))
    }

    @Test func garbageNamesNeverCrashAndWhatParsesPrintsBackTheSame() {
        var generator = SeededGenerator(seed: 37)
        let alphabet = Array("uarth4tcpi0:@/[]9.-x ")
        for _ in 0..<20_000 {
            let length = Int(generator.next() % 24)
            let text = String((0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
            if let radio = Radio(text) {
                #expect(Radio(radio.description) == radio, "\(text)")
            } else if Radio.looksLikeRadio(text) {
                #expect(Radio.problem(text) != nil)
            }
        }
    }

    // MARK: Cutting the byte stream

    static let event: [UInt8] = [0x04, 0x3E, 0x03, 0x02, 0x00, 0x00]
    static let acl: [UInt8] = [0x02, 0x01, 0x20, 0x03, 0x00, 0xAA, 0xBB, 0xCC]
    static let sco: [UInt8] = [0x03, 0x01, 0x00, 0x02, 0x11, 0x22]
    static let iso: [UInt8] = [0x05, 0x01, 0x00, 0x01, 0x40, 0x99]  // length 0x4001 & 0x3FFF = 1
    static let complete: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]

    @Test func eventsComeOutWholeHoweverTheBytesAreSplitAndDataPacketsAreSkipped() throws {
        let stream = Self.event + Self.acl + Self.complete + Self.sco + Self.iso + Self.event
        let wanted = [Array(Self.event.dropFirst()), Array(Self.complete.dropFirst()), Array(Self.event.dropFirst())]
        for cut in 0...stream.count {
            for second in cut...stream.count {
                var framer = H4Framer()
                var events = try framer.feed(stream[..<cut])
                events += try framer.feed(stream[cut..<second])
                events += try framer.feed(stream[second...])
                #expect(events == wanted)
                #expect(framer.skipped == 3)
                #expect(framer.pending == 0)
            }
        }
    }

    @Test func aPartialPacketWaitsForItsRest() throws {
        var framer = H4Framer()
        let long = [0x04, 0x3E, 0xFF] + [UInt8](repeating: 0x5A, count: 255)
        #expect(try framer.feed(long.prefix(200)).isEmpty)
        #expect(framer.pending == 200)
        #expect(try framer.feed(long.dropFirst(200)) == [Array(long.dropFirst())])
        #expect(framer.pending == 0)
    }

    @Test func aByteThatStartsNoPacketIsNotH4() {
        var framer = H4Framer()
        #expect(throws: H4Framer.NotH4(type: 0x99)) { try framer.feed(Self.event + [0x99, 0x42]) }
        #expect(H4Framer.NotH4(type: 0x99).description == "no H4 packet starts with 0x99")
        framer.reset()
        #expect(framer.pending == 0)
        #expect(throws: Never.self) { try framer.feed(Self.event) }
    }

    @Test func garbageNeverCrashesAndEveryEventHandedOnHasItsOwnLength() {
        var generator = SeededGenerator(seed: 4)
        for _ in 0..<5_000 {
            var framer = H4Framer()
            // Mostly valid type bytes, so that the lengths are what gets exercised.
            let bytes = (0..<Int(generator.next() % 600)).map { _ in
                let byte = UInt8(truncatingIfNeeded: generator.next())
                return generator.next() % 3 == 0 ? [0x02, 0x03, 0x04, 0x05][Int(byte % 4)] : byte
            }
            var offset = 0
            while offset < bytes.count {
                let step = Int(generator.next() % 40) + 1
                let chunk = bytes[offset..<min(offset + step, bytes.count)]
                offset += step
                guard let events = try? framer.feed(chunk) else { break }
                for event in events {
                    #expect(event.count == 2 + Int(event[1]))
                }
            }
        }
    }

    // MARK: Taking the controller over

    @Test func theControllerIsResetAskedItsFeaturesAndToldWhichEventsToSend() {
        var setup = ControllerSetup()
        var action = setup.start()
        var sent: [HCICommand] = []
        while case .send(let command) = action {
            sent.append(command)
            // A vendor event and another command's answer are not the answer awaited.
            #expect(setup.handle(event: [0xFF, 0x01, 0x00]) == nil)
            #expect(setup.handle(event: [0x0E, 0x04, 0x01, 0x34, 0x12, 0x00]) == nil)
            var answer: [UInt8] = [0x0E, 0x04, 0x01, UInt8(command.opcode & 0xFF), UInt8(command.opcode >> 8), 0x00]
            if command == .readLEFeatures {
                answer = [0x0E, 0x0C, 0x01, 0x03, 0x20, 0x00, 0x7F, 0x10, 0, 0, 0, 0, 0, 0]
            }
            action = setup.handle(event: answer) ?? .failed(.init(command: "lost", reason: .timeout))
        }
        #expect(sent == [.reset, .readLEFeatures, .setEventMask, .setLEEventMask])
        #expect(action == .ready(LEFeatures(rawValue: 0x107F)))
        #expect(LEFeatures(rawValue: 0x107F).extendedAdvertising)
        #expect(LEFeatures(rawValue: 0x107F).description == "LE features 0x000000000000107f (extended advertising)")
    }

    @Test func aRefusalOrASilenceFailsWithTheCommandsName() {
        var setup = ControllerSetup()
        _ = setup.start()
        _ = setup.handle(event: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
        #expect(
            setup.handle(event: [0x0E, 0x04, 0x01, 0x03, 0x20, 0x01])
                == .failed(.init(command: "LE Read Local Supported Features", reason: .status(.unknownCommand))))
        var silent = ControllerSetup()
        _ = silent.start()
        #expect(silent.timedOut() == .failed(.init(command: "Reset", reason: .timeout)))
        #expect(silent.handle(event: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]) == nil)
    }

    @Test func theCommandsBytesAreTheSpecificationsOnes() {
        #expect(HCICommand.reset.packet == [0x01, 0x03, 0x0C, 0x00])
        #expect(HCICommand.readAddress.packet == [0x01, 0x09, 0x10, 0x00])
        #expect(HCICommand.readLEFeatures.packet == [0x01, 0x03, 0x20, 0x00])
        #expect(
            HCICommand.setEventMask.packet == [0x01, 0x01, 0x0C, 0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0x00, 0x20])
        #expect(
            HCICommand.setLEEventMask.packet == [
                0x01, 0x01, 0x20, 0x08, 0x1F, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            ])
    }
}
