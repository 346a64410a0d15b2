import BackbeatCore
import Foundation
import Synchronization

/// The IANA time zones this service knows: the system's compiled zone database, the directory `TZDIR` names or
/// `/usr/share/zoneinfo` (Debian's tzdata, the files PostgreSQL reads too: it is built `--with-system-tzdata`), each
/// zone read once and kept. A name is known when the database's own list (`tzdata.zi`: its zones and their links,
/// `Factory` aside) names it and the directory holds a TZif file of that name that does not count leap seconds; the
/// files beside the zones (`localtime`, `posixrules`, `right/...`) are not zones.
public final class ZoneDatabase: Sendable {
    public let directory: String
    /// The names `tzdata.zi` lists (nil: the directory has no such list, and any TZif file of a zone's name is one).
    private let names: Set<String>?
    private let loaded = Mutex<[String: (name: ZoneName, rules: ZoneRules)]>([:])

    public init(directory: String = ProcessInfo.processInfo.environment["TZDIR"] ?? "/usr/share/zoneinfo") {
        self.directory = directory
        names = (try? String(contentsOfFile: directory + "/tzdata.zi", encoding: .utf8)).map(Self.names(listedIn:))
    }

    /// The zones (`Z NAME ...`) and links (`L TARGET NAME`) of a `tzdata.zi`.
    public static func names(listedIn text: String) -> Set<String> {
        var names: Set<String> = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count >= 2, fields[0] == "Z", fields[1] != "Factory" { names.insert(String(fields[1])) }
            if fields.count >= 3, fields[0] == "L" { names.insert(String(fields[2])) }
        }
        return names
    }

    /// Why a name is not a zone here.
    public struct UnknownZone: Error, CustomStringConvertible {
        public var name: String
        public var directory: String
        public var description: String {
            "unknown time zone \"\(name)\": not an IANA zone name of the zone database in \(directory) (e.g. America/Los_Angeles, Asia/Kathmandu, UTC)"
        }
    }

    /// The rules of zone `name`; throws `UnknownZone` when the database holds no such zone.
    public func rules(_ name: String) throws(UnknownZone) -> ZoneRules {
        try zone(name).rules
    }

    /// `name` as a zone name when the database holds it; throws `UnknownZone` otherwise.
    public func known(_ name: String) throws(UnknownZone) -> ZoneName {
        try zone(name).name
    }

    private func zone(_ name: String) throws(UnknownZone) -> (name: ZoneName, rules: ZoneRules) {
        if let kept = loaded.withLock({ $0[name] }) { return kept }
        let unknown = UnknownZone(name: name, directory: directory)
        guard let zone = ZoneName(name), names?.contains(zone.text) ?? !["localtime", "posixrules"].contains(zone.text),
              let bytes = FileManager.default.contents(atPath: directory + "/" + zone.text),
              let rules = try? ZoneRules(name: zone.text, tzif: Array(bytes)) else { throw unknown }
        loaded.withLock { $0[name] = (zone, rules) }
        return (zone, rules)
    }
}
