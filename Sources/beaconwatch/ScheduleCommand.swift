import ArgumentParser
import BeaconCore
import Daemon
import Foundation
import JSONText
import Rules

/// `beaconwatch schedule --rules SRC --region ID --at TIME [--json]` (docs/behaviour.md §8, §11).
struct ScheduleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedule",
        abstract: "Say whether a rule region's schedule is open at an instant, and until when.",
        discussion: """
            Prints 'open' or 'closed', then 'until' and the instant of the next change in the \
            region's own time zone (nothing more for an empty schedule, which is always open). \
            --json prints {"open": true|false, "next": "…"|null}.
            """
    )

    @Option(help: "The rules source: a u_beacons.json file or an http(s) URL (fetched as written).")
    var rules: String

    @Option(help: "The rule region's id.")
    var region: String

    @Option(help: "The instant, ISO-8601 with an offset: 2013-10-28T13:30:00+01:00.")
    var at: String

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        guard let time = Timestamp(iso8601: at), Timestamp.traceRange.contains(time) else {
            throw InputError(
                file: "--at",
                message: "\"\(at)\" is not an ISO-8601 time with an offset from 1970 to 2100, "
                    + "such as 2013-10-28T13:30:00+01:00")
        }
        let bytes: [UInt8]
        if rules.hasPrefix("http://") || rules.hasPrefix("https://") {
            guard let url = URL(string: rules) else { throw InputError(file: rules, message: "is not a valid URL") }
            switch RulesSource.download(url) {
            case .success(let body): bytes = body
            case .failure(let failure):
                throw RuntimeFailure("\(rules) cannot be fetched: \(failure); check the URL and the network")
            }
        } else {
            bytes = try RulesSource.readFile(rules, check: "check the path").get()
        }
        let document: RulesDocument
        switch RulesDocument.load(bytes, name: rules) {
        case .success(let loaded): document = loaded
        case .failure(let error):
            throw InputError(file: rules, message: error.detail(after: rules))
        }
        guard let found = document.regions.first(where: { $0.id == region }) else {
            let ids = document.regions.map(\.id).joined(separator: ", ")
            throw InputError(
                file: rules, message: "no region \"\(region)\"; its regions are: \(ids.isEmpty ? "none" : ids)")
        }
        let zone = found.timeZone ?? TimeZone(secondsFromGMT: 0)!
        let open = found.schedule.isOpen(at: time, in: zone)
        let next = found.schedule.nextChange(after: time, in: zone)
        let style = Date.ISO8601FormatStyle(timeZoneSeparator: .colon, timeZone: zone)
        let output = LineWriter()
        if json {
            var object = JSONObjectWriter()
            object.add("open", open)
            object.add("next", next.map { style.format($0.date) })
            output.write(line: object.text)
        } else if let next {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let names = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
            let weekday = names[calendar.component(.weekday, from: next.date) - 1]
            output.write(line: "\(open ? "open" : "closed") until \(style.format(next.date)) (\(weekday))")
        } else {
            output.write(line: open ? "open" : "closed")
        }
        output.flush()
    }
}
