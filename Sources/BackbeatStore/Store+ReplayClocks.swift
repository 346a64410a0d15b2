import BackbeatCore
import PostgresNIO

extension Store {
    /// The instant the lines of the plain input at `position` are judged against: the one stored by its first
    /// replay, or `now`, stored here when the input has none yet (`replay_clocks`).
    public func replayClock(for position: TopicPartition, now: Timestamp) async throws -> Timestamp {
        let rows = try await client.query("""
            INSERT INTO replay_clocks (input, judged_at)
            VALUES (\(position.topic), timestamptz 'epoch' + \(now.microseconds) * interval '1 microsecond')
            ON CONFLICT (input) DO UPDATE SET input = excluded.input
            RETURNING (extract(epoch FROM judged_at) * 1000000)::bigint
            """, logger: logger)
        for try await microseconds in rows.decode(Int64.self) {
            return Timestamp(microseconds: microseconds)
        }
        return now
    }

    static let replayClocksQuery: PostgresQuery =
        "SELECT input, (extract(epoch FROM judged_at) * 1000000)::bigint FROM replay_clocks"

    /// The stored replay clocks read by `replayClocksQuery`, by the input's position (partition 0 of `replay:<identity>`).
    static func replayClocks(_ rows: PostgresRowSequence) async throws -> [TopicPartition: Timestamp] {
        var clocks: [TopicPartition: Timestamp] = [:]
        for try await (input, microseconds) in rows.decode((String, Int64).self) {
            clocks[TopicPartition(topic: input, partition: 0)] = Timestamp(microseconds: microseconds)
        }
        return clocks
    }
}
