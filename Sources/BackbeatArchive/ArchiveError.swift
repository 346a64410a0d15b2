/// An input that cannot be read to its end: names the file and the byte position (in the file as stored) where it
/// went wrong.
public struct ArchiveError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var position: Int
    public var message: String

    public init(path: String, position: Int, _ message: String) {
        self.path = path
        self.position = position
        self.message = message
    }

    public var description: String { "\(path): \(message) at byte \(position)" }
}
