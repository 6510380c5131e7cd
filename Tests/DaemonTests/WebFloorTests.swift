import Foundation
import TestSupport
import Testing

/// The floor pages of a daemon, reached without the Area's UUID (issue 72): `/floors` goes to the
/// one floor with a plan, or lists them; `/floors/<Area's name>` is its page.
@Suite struct WebFloorTests {
    static let uuid = WebTests.uuid
    /// WebTests' Office as a floor: its two rooms drawn, a scanner in each, a declared tag.
    static let plan = """
        LocationScanner.1001 = reception
        LocationScanner.2001 = kitchen
        LocationZoneShape.\(uuid):1 = 0,0; 4,0; 4,4; 0,4
        LocationZoneShape.\(uuid):2 = 4,0; 8,0; 8,4; 4,4
        LocationScannerPoint.reception = 0.3,0.3,1
        LocationScannerPoint.kitchen = 7.7,2,1
        Door.inside = 4,1.5; 4,2.5
        Tag.badge = ibeacon:FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7:1, Anna's badge

        """

    @Test func theFloorIsReachedWithoutItsUUID() async throws {
        let daemon = try await WebTests.Daemon(extra: Self.plan)
        // One floor with a plan: /floors goes to it.
        for path in ["/floors", "/floors/"] {
            let index = try await daemon.get(path)
            #expect(index.status == 303, "\(path): \(index.status) \(index.body)")
            #expect(index.headers["location"] == "/floors/\(Self.uuid)", "\(path): \(index.headers)")
        }
        // By its name, any case, spaces percent-encoded or not: the page of its UUID.
        for path in ["/floors/Office", "/floors/office", "/floors/\(Self.uuid)"] {
            let page = try await daemon.get(path)
            #expect(page.status == 200, "\(path): \(page.body)")
            #expect(page.body.contains("<title>Floor Office"), "\(path): \(page.body.prefix(400))")
            #expect(page.body.contains("<svg class=\"floor\" data-area=\"\(Self.uuid)\""), "\(path)")
        }
        let fragment = try await daemon.get("/floors/office?fragment=main")
        #expect(fragment.status == 200 && fragment.body.hasPrefix("<p class=\"now\">"), "\(fragment.body.prefix(200))")
        // A name that is no floor says which are.
        let unknown = try await daemon.get("/floors/Cellar")
        #expect(unknown.status == 404)
        #expect(unknown.body.contains("Office (/floors/\(Self.uuid))"), "\(unknown.body)")
        try await daemon.finish()
    }

    /// Without a floor plan `/floors` says how to give one.
    @Test func withoutAPlanTheFloorsSayHowToGiveOne() async throws {
        let daemon = try await WebTests.Daemon()
        let index = try await daemon.get("/floors")
        #expect(index.status == 404)
        #expect(index.body.contains("no Area has a floor plan"), "\(index.body)")
        try await daemon.finish()
    }
}
