import BackbeatStore

/// Why a replay or a rebuild stopped, in words for the operator: a damaged line, a gap in an archive, an input
/// missing for a rebuild, another run moving the same stored position.
public struct ReplayError: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }

    /// An artist's zone was set while `path` was replayed: its batch counted in the zones before is not written.
    static func zonesChanged(_ path: String, _ changed: ZonesChanged) -> ReplayError {
        ReplayError("\(path): an artist's zone was set during the replay (\(changed.countedAt) -> \(changed.recorded)); run the replay "
            + "again: it resumes after what was applied, in the zones recorded now")
    }
}
