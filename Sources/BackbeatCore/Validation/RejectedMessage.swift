/// A message that failed validation, kept with its position so it is recorded exactly once.
public struct RejectedMessage: Equatable, Sendable {
    /// `rejected_events` keeps raw values up to this many bytes (the dead-letter topic gets them whole).
    public static let maxStoredValueBytes = 64 * 1024

    public var position: MessagePosition
    public var key: [UInt8]?
    public var value: [UInt8]?
    public var rejection: Rejection

    /// The value as `rejected_events` stores it: its first `maxStoredValueBytes` bytes.
    public var storedValue: [UInt8]? {
        guard let value, value.count > Self.maxStoredValueBytes else { return value }
        return Array(value.prefix(Self.maxStoredValueBytes))
    }

    public init(position: MessagePosition, key: [UInt8]?, value: [UInt8]?, rejection: Rejection) {
        self.position = position
        self.key = key
        self.value = value
        self.rejection = rejection
    }
}
