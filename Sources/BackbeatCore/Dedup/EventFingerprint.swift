/// What dedup remembers of an event: its `event_id` and what it says, each as a 64-bit hash that stays the same
/// across processes and restarts (so that it can be stored). Two messages are the same event resent when their ids'
/// hashes and their payloads' hashes are equal; the same id with another payload is a conflict.
///
/// The payload is the parsed fields Backbeat uses, in a fixed order, not the message's bytes: a resend may order the
/// keys differently, escape a character another way or add fields Backbeat ignores, and is still the same event.
/// Its family is part of it (a revenue event and a stream under one id conflict). A page event's `properties` are
/// not (they are not counted).
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
        case .page(let page):
            payload.add(4)
            switch page.kind {
            case .portfolioView(let category):
                payload.add(1)
                payload.add(self, category, in: value)
            case .sectionView(let section):
                payload.add(2)
                payload.add(self, section, in: value)
            case .blockInteraction(let block, let blockType, let action):
                payload.add(3)
                payload.add(self, block, in: value)
                payload.add(self, blockType, in: value)
                payload.add(self, action, in: value)
            case .ctaClick(let actionType):
                payload.add(4)
                payload.add(self, actionType, in: value)
            }
            payload.add(self, page.visitor, in: value)
            payload.add(self, page.portfolio, in: value)
            payload.add(self, page.session, in: value)
            payload.add(self, page.country, in: value)
            payload.add(self, page.referrer, in: value)
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

/// A 64-bit hash of a sequence of fields that is the same in every process (Swift's `Hasher` is seeded per process),
/// taken a 64-bit word at a time: each word (a number, or 8 bytes of a string, little-endian, the last padded with
/// zeros) is mixed into the state by MurmurHash3's 64-bit finalizer, a bijection, so that two sequences that differ
/// in one word never meet. Each string is prefixed by its length and each absent field marked, so that no two
/// different sequences of fields run together into the same words. Stored windows hold these hashes: changing how
/// they are taken changes `DedupWindow.storageVersion`.
struct StableHasher {
    private var state: UInt64 = 0xcbf2_9ce4_8422_2325

    private mutating func word(_ word: UInt64) {
        state = MurmurHash3.fmix(state ^ word)
    }

    mutating func add(_ number: Int64) {
        word(UInt64(bitPattern: number))
    }

    mutating func add(_ number: Int64?) {
        guard let number else { return word(0) }
        word(1)
        add(number)
    }

    mutating func add(_ bytes: UnsafeRawBufferPointer) {
        word(UInt64(bytes.count))
        var offset = 0
        while offset + 8 <= bytes.count {
            word(UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
            offset += 8
        }
        let rest = bytes.count - offset
        guard rest > 0 else { return }
        // The last 1-7 bytes, in the low bytes of a word: shifted out of the last 8 bytes, or copied when there are
        // fewer than 8 in all.
        var last: UInt64 = 0
        if bytes.count >= 8 {
            last = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self)) >> UInt64((8 - rest) * 8)
        } else {
            withUnsafeMutableBytes(of: &last) { $0.copyMemory(from: bytes) }
            last = UInt64(littleEndian: last)
        }
        word(last)
    }

    /// A case name (an enum's raw value).
    mutating func add(name: String) {
        var name = name
        name.withUTF8 { add(UnsafeRawBufferPointer($0)) }
    }

    mutating func add(_ record: EventRecord, _ text: EventText, in value: UnsafeRawBufferPointer) {
        record.withBytes(of: text, in: value) { add($0) }
    }

    mutating func add(_ record: EventRecord, _ text: EventText?, in value: UnsafeRawBufferPointer) {
        guard let text else { return word(0) }
        word(1)
        add(record, text, in: value)
    }

    /// The hash of the fields added.
    var value: UInt64 { MurmurHash3.fmix(state) }
}
