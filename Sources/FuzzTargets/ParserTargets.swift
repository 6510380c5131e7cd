import BeaconCore
import JSONText

/// The byte-level readers of sources: HCI events, btsnoop captures, trace lines.
enum ParserTargets {
    static func hci(_ bytes: UnsafeRawBufferPointer) {
        var decoder = AdvertisingReportDecoder()
        decoder.decode(event: bytes) { advertisement in
            precondition(advertisement.rssi != 127, "a report without RSSI was delivered")
        }
        precondition(decoder.statistics.events == 1, "one event counted as \(decoder.statistics.events)")
    }

    /// As `FileSource` reads a capture, from memory: every record parsed, each time checked, each
    /// event decoded and written as a `decode` line.
    static func btsnoop(_ bytes: [UInt8]) {
        guard case .success(let datalink) = BTSnoop.parseHeader(bytes) else { return }
        var decoder = AdvertisingReportDecoder()
        var offset = BTSnoop.headerSize
        while let parsed = BTSnoop.parseRecord(bytes, at: offset) {
            guard case .success(let (record, next)) = parsed else { return }
            precondition(next > offset && next <= bytes.count, "record at \(offset) ends at \(next)")
            offset = next
            guard BTSnoop.problem(with: record) == nil else { continue }
            guard let event = BTSnoop.event(in: record, datalink: datalink) else { continue }
            event.withUnsafeBytes { body in
                decoder.decode(event: body) { advertisement in
                    let line = advertisement.jsonLine(at: record.time)
                    // Records from 1900 to 2100 are taken (docs/behaviour.md §3.2): a four-digit year in range.
                    precondition(
                        line.hasPrefix(#"{"t":"19"#) || line.hasPrefix(#"{"t":"20"#)
                            || line.hasPrefix(#"{"t":"2100-01-01T00:00:00.000Z""#), line)
                }
            }
        }
    }

    /// The stream (after the first byte) fed in chunks whose sizes follow from the first byte, as
    /// reads of a line return them: the same events as fed whole, each as long as its length
    /// says, and the same verdict when the stream is not H4.
    static func h4(_ bytes: [UInt8]) {
        guard let seed = bytes.first else { return }
        let stream = Array(bytes.dropFirst())
        var whole = H4Framer()
        let expected = Result { () throws(H4Framer.NotH4) in try whole.feed(stream) }
        var chunked = H4Framer()
        var events: [[UInt8]] = []
        var failure: H4Framer.NotH4?
        var offset = 0
        var step = Int(seed % 17) + 1
        while offset < stream.count, failure == nil {
            let end = min(offset + step, stream.count)
            do {
                events += try chunked.feed(stream[offset..<end])
            } catch {
                failure = error
            }
            offset = end
            step = (step * 5 + Int(seed)) % 23 + 1
        }
        switch expected {
        case .success(let all):
            precondition(failure == nil && events == all, "chunked reading differs from reading whole")
        case .failure(let error):
            precondition(failure == error, "the stream was not H4 whole but \(String(describing: failure)) in chunks")
            precondition(all(events, areAPrefixOf: stream), "events handed on before the bad byte are wrong")
        }
        var decoder = AdvertisingReportDecoder()
        var setup = ControllerSetup()
        _ = setup.start()
        for event in events {
            precondition(event.count == 2 + Int(event[1]), "an event of \(event.count) bytes says \(event[1])")
            event.withUnsafeBytes { body in decoder.decode(event: body) { _ in } }
            _ = setup.handle(event: event)
        }
    }

    /// Whether `events`, each with its 0x04 type byte, are where the stream starts (data packets
    /// between them aside): a weak check that no byte was invented.
    private static func all(_ events: [[UInt8]], areAPrefixOf stream: [UInt8]) -> Bool {
        var index = 0
        for event in events {
            guard
                let found = (index..<stream.count).first(where: { start in
                    stream[start] == 0x04 && stream.count - start > event.count
                        && Array(stream[(start + 1)...(start + event.count)]) == event
                })
            else { return false }
            index = found + 1 + event.count
        }
        return true
    }

    /// Every line through one ``TraceParser``: accepted lines are in time order and inside
    /// ``Timestamp/traceRange``; HCI lines decode; a line the quick path reads is read the same
    /// by the general way.
    static func trace(_ bytes: [UInt8]) {
        var parser = TraceParser()
        var decoder = AdvertisingReportDecoder()
        var last: Timestamp?
        for (index, line) in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            // The quick path reads only what the general way reads the same.
            if let quick = line.withContiguousStorageIfAvailable({ TraceParser.quickRecord($0) }) ?? nil {
                let general = TraceParser.generalRecord(line)
                precondition(
                    general?.0 == quick.0 && general?.1 == quick.1, "line \(index + 1): the quick path differs")
            }
            let parsed = parser.parse(line, number: index + 1)
            if case .failure(let error) = parsed { Message.check(error.description) }
            guard case .success(let (time, record)?) = parsed else { continue }
            precondition(Timestamp.traceRange.contains(time), "line \(index + 1): t \(time.microseconds)")
            precondition(last.map { $0 <= time } ?? true, "line \(index + 1) went back in time")
            last = time
            switch record {
            case .sighting(let advertisement): _ = advertisement.jsonLine(at: time)
            case .hci(let event): decoder.decode(event: event) { _ = $0.jsonLine(at: time) }
            case .position(let position):
                precondition((-90...90).contains(position.latitude) && (-180...180).contains(position.longitude))
            case .report(let report):
                precondition(
                    ScannerReport.isValidName(report.scanner) && ScannerReport.isValidName(report.tag)
                        && (-128...126).contains(report.rssi))
            case .learn(let command):
                if case .train(let seconds) = command.action { precondition(LearnCommand.seconds.contains(seconds)) }
            case .sensor(let message):
                precondition(!message.sensor.isEmpty)
                _ = message.traceLine(at: time)
            case .mode, .command: break
            }
        }
    }

    /// The hand-written reader against `JSONDecoder`: the same documents accepted, the same
    /// values, but for the reader's documented differences (``JSONReader``): UTF-16 and UTF-32
    /// documents are skipped, a zero written with an exponent may be refused by `JSONDecoder`
    /// alone, and a repeated key's value that `JSONDecoder` skips unchecked is checked by the
    /// reader (then the reader skipping it as `JSONDecoder` does must read the same).
    static func json(_ bytes: [UInt8]) {
        let ours = JSONReader.parse(bytes)
        if let ours { _ = ours.jsonText }
        guard !bytes.contains(0), !bytes.starts(with: [0xFE, 0xFF]), !bytes.starts(with: [0xFF, 0xFE]) else {
            return
        }
        let reference = JSONValue.decodedByFoundation(bytes)
        if reference == nil, let ours, JSONReader.mayBeZeroWithExponent(ours, bytes) { return }
        if ours == nil, reference != nil,
            JSONValue.identical(JSONReader.parse(bytes, skippingRepeatedValues: true), reference)
        {
            return
        }
        precondition(
            JSONValue.identical(ours, reference),
            "JSONReader read \(ours?.jsonText ?? "nothing") where JSONDecoder read \(reference?.jsonText ?? "nothing")")
    }
}
