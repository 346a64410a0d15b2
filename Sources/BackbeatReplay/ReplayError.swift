/// Why a replay or a rebuild stopped, in words for the operator: a damaged line, a gap in an archive, an input
/// missing for a rebuild, another run moving the same stored position.
public struct ReplayError: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
