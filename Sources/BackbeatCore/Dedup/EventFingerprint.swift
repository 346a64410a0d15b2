/// What dedup remembers of an event: its `event_id` and what it says, each as a 64-bit hash that stays the same
/// across processes and restarts (so that it can be stored). Two messages are the same event resent when their ids'
/// hashes and their payloads' hashes are equal; the same id with another payload is a conflict.
///
/// The payload is the parsed fields Backbeat uses, in a fixed order, not the message's bytes: a resend may order the
/// keys differently, escape a character another way or add fields Backbeat ignores, and is still the same event.
/// Its family is part of it (a revenue event and a stream under one id conflict).
public struct EventFingerprint: Hashable, Sendable {
    public var id: UInt64
    public var payload: UInt64

    public init(id: UInt64, payload: UInt64) {
        self.id = id
        self.payload = payload
    }
}

extension EventRecord {
    /// This record's fingerprint; `value` is the message it was decoded from.
    public func fingerprint(in value: UnsafeRawBufferPointer) -> EventFingerprint {
        var id = StableHasher()
        id.add(self, eventID, in: value)
        var payload = StableHasher()
        payload.add(occurredAt.microseconds)
        payload.add(self, artist, in: value)
        switch details {
        case .stream(let stream):
            payload.add(1)
            payload.add(self, stream.track, in: value)
            payload.add(self, stream.platform, in: value)
            payload.add(self, stream.listener, in: value)
            payload.add(self, stream.country, in: value)
            payload.add(name: stream.ageRange.rawValue)
            payload.add(name: stream.gender.rawValue)
            payload.add(stream.durationMs)
        case .revenue(let revenue):
            payload.add(2)
            payload.add(name: revenue.source.rawValue)
            payload.add(Int64(truncatingIfNeeded: revenue.amount.micros))
            payload.add(Int64(truncatingIfNeeded: revenue.amount.micros >> 64))
            payload.add(self, revenue.currency, in: value)
            payload.add(self, revenue.platform, in: value)
            payload.add(self, revenue.track, in: value)
        case .social(let social):
            payload.add(3)
            payload.add(self, social.platform, in: value)
            payload.add(self, social.action, in: value)
            payload.add(social.count)
            payload.add(self, social.post, in: value)
        }
        return EventFingerprint(id: id.value, payload: payload.value)
    }
}

extension EventRecord {
    /// The rejection of this record when its `event_id` was counted within the dedup window with other fields.
    public func conflictingID(in value: UnsafeRawBufferPointer) -> Rejection {
        let id = withBytes(of: eventID, in: value) { String(decoding: $0, as: UTF8.self) }
        return Rejection(.conflictingEventID, "event_id \(id) was counted within the dedup window with other fields")
    }
}

/// A 64-bit hash of a sequence of fields that is the same in every process (Swift's `Hasher` is seeded per process):
/// FNV-1a over the fields' bytes, each string prefixed by its length and each absent field marked, so that no two
/// different sequences run together into the same bytes; then a 64-bit finalizer spreads the bits.
struct StableHasher {
    private var state: UInt64 = 0xcbf2_9ce4_8422_2325

    private mutating func byte(_ byte: UInt8) {
        state = (state ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    mutating func add(_ number: Int64) {
        for shift in stride(from: 0, to: 64, by: 8) { byte(UInt8(truncatingIfNeeded: number >> Int64(shift))) }
    }

    mutating func add(_ number: Int64?) {
        guard let number else { return byte(0) }
        byte(1)
        add(number)
    }

    mutating func add(_ bytes: UnsafeRawBufferPointer) {
        add(Int64(bytes.count))
        for value in bytes { byte(value) }
    }

    /// A case name (an enum's raw value).
    mutating func add(name: String) {
        add(Int64(name.utf8.count))
        for value in name.utf8 { byte(value) }
    }

    mutating func add(_ record: EventRecord, _ text: EventText, in value: UnsafeRawBufferPointer) {
        record.withBytes(of: text, in: value) { add($0) }
    }

    mutating func add(_ record: EventRecord, _ text: EventText?, in value: UnsafeRawBufferPointer) {
        guard let text else { return byte(0) }
        byte(1)
        add(record, text, in: value)
    }

    /// The hash of the fields added: the state spread by MurmurHash3's 64-bit finalizer.
    var value: UInt64 { MurmurHash3.fmix(state) }
}
