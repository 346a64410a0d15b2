/// Why a message was not aggregated: a stable reason code and a human-readable detail.
public struct Rejection: Error, Equatable, Sendable {
    /// A stable, documented reason code (docs/events.md). Codes are never renamed.
    public struct Reason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The value is null (a tombstone) or has no bytes.
        public static let emptyValue = Reason(rawValue: "empty_value")
        /// The value is larger than 64 KiB.
        public static let tooLarge = Reason(rawValue: "too_large")
        /// The value is not valid UTF-8 JSON.
        public static let invalidJSON = Reason(rawValue: "invalid_json")
        /// The value is JSON but not an object.
        public static let notObject = Reason(rawValue: "not_object")
        /// A top-level field appears more than once.
        public static let duplicateField = Reason(rawValue: "duplicate_field")
        /// A required field is absent.
        public static let missingField = Reason(rawValue: "missing_field")
        /// A field has the wrong JSON type.
        public static let invalidType = Reason(rawValue: "invalid_type")
        /// A field has the right type but a value outside its allowed set or range.
        public static let invalidValue = Reason(rawValue: "invalid_value")
        /// `type` is not one of stream, revenue, social (or a page event's: valid, not counted yet).
        public static let unknownType = Reason(rawValue: "unknown_type")
        /// `occurred_at` is not an RFC 3339 timestamp.
        public static let invalidTimestamp = Reason(rawValue: "invalid_timestamp")
        /// `occurred_at` is more than one hour after the time of consumption.
        public static let futureTimestamp = Reason(rawValue: "future_timestamp")
        /// A page event's `properties` has more than 32 members.
        public static let tooManyProperties = Reason(rawValue: "too_many_properties")
        /// A key of a page event's `properties` is over 64 bytes.
        public static let propertyKeyTooLong = Reason(rawValue: "property_key_too_long")
        /// A value of a page event's `properties` is over 256 bytes.
        public static let propertyValueTooLong = Reason(rawValue: "property_value_too_long")
        /// The `event_id` was counted within the dedup window with other fields (`DedupWindow`): not a resend.
        public static let conflictingEventID = Reason(rawValue: "conflicting_event_id")

        /// Every reason code, in documentation order.
        public static let all: [Reason] = [
            .emptyValue, .tooLarge, .invalidJSON, .notObject, .duplicateField, .missingField, .invalidType,
            .invalidValue, .unknownType, .invalidTimestamp, .futureTimestamp, .tooManyProperties, .propertyKeyTooLong,
            .propertyValueTooLong, .conflictingEventID,
        ]
    }

    public var reason: Reason
    public var detail: String

    public init(_ reason: Reason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }
}
