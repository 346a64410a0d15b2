import BackbeatCore
import Foundation

/// Zone rules read from the system's zone database (`/usr/share/zoneinfo`), for tests that set artists' zones where the
/// service's `ZoneDatabase` is not at hand.
public enum SystemZones {
    public static func rules(_ name: String) throws -> ZoneRules {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo").appendingPathComponent(name))
        return try ZoneRules(name: name, tzif: Array(bytes))
    }
}
