import BackbeatCore
import CRdKafka
import Logging
import Synchronization

/// A Kafka group consumer whose positions come from the caller, not from Kafka's committed offsets.
///
/// On every assignment librdkafka calls `onAssign` (on the polling thread, inside `poll`) with the partitions added;
/// it returns the offset to start each one from (absent: from the beginning). On revocation `onRevoke` runs
/// first, then the partitions are released. Both should return at once: the group's rebalance waits for them. The
/// log lines `partitions assigned` and `partitions revoked` (or `lost`) say how long each took (`callback_ms`).
/// Rebalancing is incremental (`cooperative-sticky`): a rebalance hands over only the partitions that move, and the
/// others are consumed on throughout. A partition whose position is
/// no longer on the broker (`auto.offset.reset=error`) stops being fetched and is reported to `onOffsetOutOfRange`:
/// nothing is skipped unless the caller moves it on (`restartFetching`).
///
/// All methods except `commitAsync`, `isBrokerReachable` and `partitions(of:)` must be called from one thread: the
/// one that polls. `poll` blocks, so that thread must not be a Swift concurrency one.
public final class KafkaConsumer: @unchecked Sendable {
    // @unchecked: `handle` is set once in init and freed once in deinit; librdkafka's handle is thread-safe for
    // the calls made off the polling thread (commit, metadata).

    /// Called with newly assigned partitions; returns each one's starting offset.
    public typealias AssignHandler = @Sendable ([TopicPartition]) -> [TopicPartition: Int64]
    /// Called with partitions about to be taken away; `lost` when the group already gave them to another member
    /// (this one missed its session timeout), so nothing of theirs may be written any more.
    public typealias RevokeHandler = @Sendable (_ partitions: [TopicPartition], _ lost: Bool) -> Void
    /// Called (on the polling thread, inside `poll`) with the position of a partition the broker no longer has:
    /// its messages there were deleted (retention) or the log ends before it. The partition is not fetched again
    /// until `restartFetching` moves it.
    public typealias OutOfRangeHandler = @Sendable (MessagePosition) -> Void

    private let handle: OpaquePointer
    private let callbacks: Unmanaged<Callbacks>
    private var closed = false

    /// The group settings Backbeat chooses over librdkafka's defaults (docs/operations.md, "Restarts, crashes and
    /// retention"): incremental rebalancing, and a crashed member evicted after 6 s rather than 45 s (6 s is the
    /// shortest session a broker accepts by default, `group.min.session.timeout.ms`).
    public static let groupDefaults = KafkaConfiguration([
        "partition.assignment.strategy": "cooperative-sticky",
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": "2000",
    ])

    /// Creates a consumer in `groupID` and subscribes it to `topics`. `extra` wins over `groupDefaults` and every
    /// other setting made here.
    public init(
        brokers: String, groupID: String, topics: [String], extra: KafkaConfiguration = KafkaConfiguration(),
        logger: Logger, onAssign: @escaping AssignHandler, onRevoke: @escaping RevokeHandler,
        onOffsetOutOfRange: @escaping OutOfRangeHandler = { _ in }
    ) throws {
        let configuration = Self.groupDefaults.merging(KafkaConfiguration([
            "bootstrap.servers": brokers,
            "group.id": groupID,
            "enable.auto.commit": "false",
            "enable.auto.offset.store": "false",
            // A position the broker no longer has is reported (`onOffsetOutOfRange`), never skipped silently.
            "auto.offset.reset": "error",
            // Messages of aborted Kafka transactions are never counted (librdkafka's default, set so that it is said).
            "isolation.level": "read_committed",
            "enable.partition.eof": "false",
            "client.id": "backbeat",
        ])).merging(extra)
        let (handle, callbacks) = try makeClient(
            type: RD_KAFKA_CONSUMER, configuration: configuration,
            opaque: Callbacks(onAssign: onAssign, onRevoke: onRevoke, onOffsetOutOfRange: onOffsetOutOfRange, logger: logger,
                              configuredCooperative: configuration["partition.assignment.strategy"]?.contains("cooperative") ?? false)
        ) { conf in
            rd_kafka_conf_set_rebalance_cb(conf, rebalanceCallback)
            rd_kafka_conf_set_error_cb(conf, errorCallback)
            rd_kafka_conf_set_log_cb(conf, consumerLogCallback)
        }
        self.handle = handle
        self.callbacks = callbacks
        let redirected = rd_kafka_poll_set_consumer(handle)
        guard redirected == RD_KAFKA_RESP_ERR_NO_ERROR else {
            rd_kafka_destroy(handle)
            callbacks.release()
            throw KafkaError(redirected, context: "cannot serve the consumer's events from its poll")
        }

        let list = rd_kafka_topic_partition_list_new(Int32(topics.count))!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        for topic in topics {
            rd_kafka_topic_partition_list_add(list, topic, RD_KAFKA_PARTITION_UA)
        }
        let error = rd_kafka_subscribe(handle, list)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
            rd_kafka_destroy(handle)
            callbacks.release()
            throw KafkaError(error, context: "cannot subscribe to \(topics.joined(separator: ","))")
        }
    }

    deinit {
        close()
        // librdkafka 2.0.2's cooperative-sticky assignor aborts the process (an assertion on its state) when a
        // consumer that joined its group is destroyed before its first assignment (librdkafka issue 4312, fixed in
        // 2.3.0): a stop that quick would end `serve` with SIGABRT. Such a consumer owns no partition and has left
        // the group (`close`); its handle, and the callbacks its threads may still call, are left to the process's end.
        guard callbacks.takeUnretainedValue().assigned.load(ordering: .acquiring) else { return }
        rd_kafka_destroy(handle)
        callbacks.release()
    }

    /// Waits up to `timeoutMs` for messages and returns at most `maxMessages` of them (possibly none).
    public func poll(timeoutMs: Int32, maxMessages: Int) -> [ConsumedMessage] {
        var messages: [ConsumedMessage] = []
        var timeout = timeoutMs
        while messages.count < maxMessages {
            guard let pointer = rd_kafka_consumer_poll(handle, timeout) else { break }
            defer { rd_kafka_message_destroy(pointer) }
            timeout = 0
            let message = pointer.pointee
            if message.err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET, let topic = message.rkt.map({ String(cString: rd_kafka_topic_name($0)) }) {
                let position = MessagePosition(topicPartition: TopicPartition(topic: topic, partition: message.partition), offset: message.offset)
                callbacks.takeUnretainedValue().onOffsetOutOfRange(position)
                continue
            }
            if message.err != RD_KAFKA_RESP_ERR_NO_ERROR {
                if message.err != RD_KAFKA_RESP_ERR__PARTITION_EOF {
                    let text = String(cString: rd_kafka_err2str(message.err))
                    callbacks.takeUnretainedValue().logger.warning("Kafka consumer error", metadata: ["error": "\(text)"])
                }
                continue
            }
            let topic = String(cString: rd_kafka_topic_name(message.rkt))
            let key = message.key.map { Array(UnsafeRawBufferPointer(start: $0, count: message.key_len)) }
            let value = message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: message.len)) }
            var timestampType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
            let timestamp = rd_kafka_message_timestamp(pointer, &timestampType)
            messages.append(ConsumedMessage(
                position: MessagePosition(topicPartition: TopicPartition(topic: topic, partition: message.partition), offset: message.offset),
                key: key, value: value, timestampMilliseconds: timestamp >= 0 ? timestamp : nil))
        }
        return messages
    }

    /// Fetches `offsets`' partitions again from the given offsets, also those librdkafka stopped fetching after an
    /// error such as an offset out of range (which `seek` does not restart): they are taken out of the assignment and
    /// put back at those offsets. Partitions not owned are left alone.
    public func restartFetching(_ offsets: [TopicPartition: Int64]) throws {
        guard !offsets.isEmpty else { return }
        if isCooperative {
            let list = makePartitionList(offsets.map { ($0.key, $0.value) })
            defer { rd_kafka_topic_partition_list_destroy(list) }
            try check(rd_kafka_incremental_unassign(handle, list), "cannot take partitions out of the assignment")
            try check(rd_kafka_incremental_assign(handle, list), "cannot put partitions back in the assignment")
            return
        }
        // An eager assignment is replaced whole: every other partition from its current position.
        var current: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
        let error = rd_kafka_assignment(handle, &current)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR, let current else { throw KafkaError(error, context: "cannot read the assignment") }
        defer { rd_kafka_topic_partition_list_destroy(current) }
        let positions = rd_kafka_position(handle, current)
        guard positions == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(positions, context: "cannot read the positions") }
        for index in 0..<Int(current.pointee.cnt) {
            let element = current.pointee.elems[index]
            let key = TopicPartition(topic: String(cString: element.topic), partition: element.partition)
            if let offset = offsets[key] { current.pointee.elems[index].offset = offset }
        }
        let assigned = rd_kafka_assign(handle, current)
        guard assigned == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(assigned, context: "cannot assign partitions again") }
    }

    /// The first offset the broker still has for `partition` and the offset after its last message, asked of the
    /// partition's leader (blocks up to `timeoutMs`).
    public func queryWatermarks(_ partition: TopicPartition, timeoutMs: Int32 = 5000) throws -> (low: Int64, high: Int64) {
        try queryLogOffsets(handle, partition, timeoutMs: timeoutMs)
    }

    /// Whether the group rebalances incrementally (the `cooperative-sticky` assignor).
    var isCooperative: Bool { rebalancesIncrementally(handle, assumed: callbacks.takeUnretainedValue().configuredCooperative) }

    /// Stops fetching from `partitions` (`paused`) or starts again; positions are kept. Used for backpressure.
    public func setPaused(_ paused: Bool, _ partitions: [TopicPartition]) throws {
        guard !partitions.isEmpty else { return }
        let list = makePartitionList(partitions.map { ($0, Int64(RD_KAFKA_OFFSET_INVALID)) })
        defer { rd_kafka_topic_partition_list_destroy(list) }
        let error = paused ? rd_kafka_pause_partitions(handle, list) : rd_kafka_resume_partitions(handle, list)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
            throw KafkaError(error, context: paused ? "cannot pause partitions" : "cannot resume partitions")
        }
    }

    /// Records positions in Kafka's group offsets so that lag tools see progress. Never read back by Backbeat.
    public func commitAsync(_ offsets: [TopicPartition: Int64]) {
        guard !offsets.isEmpty else { return }
        let list = makePartitionList(offsets.map { ($0.key, $0.value) })
        defer { rd_kafka_topic_partition_list_destroy(list) }
        // Asynchronous: only what fails at once is answered here (the outcome of the request is not).
        logFailure(rd_kafka_commit(handle, list, 1), "cannot commit the group offsets", callbacks.takeUnretainedValue().logger)
    }

    /// The low and high watermarks of `partition` as the last fetch response reported them (no request is sent);
    /// nil while none is known.
    public func cachedWatermarks(_ partition: TopicPartition) -> (low: Int64, high: Int64)? {
        var low: Int64 = 0
        var high: Int64 = 0
        let error = rd_kafka_get_watermark_offsets(handle, partition.topic, partition.partition, &low, &high)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR, high >= 0, low >= 0 else { return nil }
        return (low, high)
    }

    /// Whether a broker answers a metadata request within `timeoutMs`.
    public func isBrokerReachable(timeoutMs: Int32 = 1000) -> Bool {
        var metadata: UnsafePointer<rd_kafka_metadata>?
        let error = rd_kafka_metadata(handle, 0, nil, &metadata, timeoutMs)
        if let metadata { rd_kafka_metadata_destroy(metadata) }
        return error == RD_KAFKA_RESP_ERR_NO_ERROR
    }

    /// Every partition of `topics` according to the cluster's metadata (a topic the cluster does not know has none).
    public func partitions(of topics: [String], timeoutMs: Int32 = 5000) throws -> Set<TopicPartition> {
        var metadata: UnsafePointer<rd_kafka_metadata>?
        // all_topics = 1: one request answers for every topic; librdkafka owns nothing we keep after destroy.
        let error = rd_kafka_metadata(handle, 1, nil, &metadata, timeoutMs)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
            throw KafkaError(error, context: "cannot read the partitions of \(topics.joined(separator: ","))")
        }
        defer { rd_kafka_metadata_destroy(metadata) }
        var result: Set<TopicPartition> = []
        let wanted = Set(topics)
        for index in 0..<Int(metadata.pointee.topic_cnt) {
            let topic = metadata.pointee.topics[index]
            let name = String(cString: topic.topic)
            guard wanted.contains(name), topic.err == RD_KAFKA_RESP_ERR_NO_ERROR else { continue }
            for partition in 0..<Int(topic.partition_cnt) {
                result.insert(TopicPartition(topic: name, partition: topic.partitions[partition].id))
            }
        }
        return result
    }

    /// Leaves the group (running `onRevoke`). Call after the last flush; safe to call twice.
    public func close() {
        guard !closed else { return }
        closed = true
        logFailure(rd_kafka_consumer_close(handle), "leaving the consumer group failed", callbacks.takeUnretainedValue().logger)
    }

    // MARK: - Callbacks

    final class Callbacks: @unchecked Sendable {
        // @unchecked: only immutable, Sendable properties; a class so that its address can be librdkafka's opaque.
        let onAssign: AssignHandler
        let onRevoke: RevokeHandler
        let onOffsetOutOfRange: OutOfRangeHandler
        let logger: Logger
        /// Whether the configured assignor is a cooperative one: the protocol assumed while librdkafka cannot say.
        let configuredCooperative: Bool
        /// Whether the group has given this consumer an assignment (possibly empty) yet.
        let assigned = Atomic<Bool>(false)

        init(onAssign: @escaping AssignHandler, onRevoke: @escaping RevokeHandler, onOffsetOutOfRange: @escaping OutOfRangeHandler,
             logger: Logger, configuredCooperative: Bool) {
            self.onAssign = onAssign
            self.onRevoke = onRevoke
            self.onOffsetOutOfRange = onOffsetOutOfRange
            self.logger = logger
            self.configuredCooperative = configuredCooperative
        }
    }
}

/// Special offsets librdkafka understands.
public enum KafkaOffset {
    /// The oldest message the broker still has.
    public static let beginning = Int64(RD_KAFKA_OFFSET_BEGINNING)
}

/// librdkafka's rebalance callback: starting offsets on assignment, the hand-over on revocation. With the
/// cooperative protocol the lists hold only the partitions that move, and the assignment changes incrementally.
private func rebalanceCallback(
    handle: OpaquePointer?, error: rd_kafka_resp_err_t,
    partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?, opaque: UnsafeMutableRawPointer?
) {
    guard let handle, let partitions, let opaque else { return }
    let callbacks = Unmanaged<KafkaConsumer.Callbacks>.fromOpaque(opaque).takeUnretainedValue()
    let list = readPartitionList(partitions)
    let cooperative = rebalancesIncrementally(handle, assumed: callbacks.configuredCooperative)
    let names = list.map(\.description).joined(separator: ",")
    switch error {
    case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
        callbacks.assigned.store(true, ordering: .releasing)
        // A cooperative rebalance that moves nothing to this member still calls here, with no partition.
        if !list.isEmpty {
            let started = ContinuousClock.now
            let offsets = callbacks.onAssign(list)
            for index in 0..<Int(partitions.pointee.cnt) {
                let key = list[index]
                partitions.pointee.elems[index].offset = offsets[key] ?? KafkaOffset.beginning
            }
            callbacks.logger.info("partitions assigned", metadata: ["partitions": "\(names)", "callback_ms": "\(milliseconds(since: started))"])
        }
        if cooperative {
            logFailure(rd_kafka_incremental_assign(handle, partitions), "incremental assign failed", callbacks.logger)
        } else {
            logFailure(rd_kafka_assign(handle, partitions), "assign failed", callbacks.logger)
        }
    default:
        let lost = rd_kafka_assignment_lost(handle) != 0
        if !list.isEmpty {
            let started = ContinuousClock.now
            callbacks.onRevoke(list, lost)
            callbacks.logger.info(lost ? "partitions lost" : "partitions revoked", metadata: [
                "partitions": "\(names)", "callback_ms": "\(milliseconds(since: started))"])
        }
        if cooperative {
            logFailure(rd_kafka_incremental_unassign(handle, partitions), "incremental unassign failed", callbacks.logger)
        } else {
            logFailure(rd_kafka_assign(handle, nil), "unassign failed", callbacks.logger)
        }
    }
}

/// The whole milliseconds since `start`.
private func milliseconds(since start: ContinuousClock.Instant) -> Int64 {
    (ContinuousClock.now - start).nanoseconds / 1_000_000
}

/// Whether the group of consumer `handle` rebalances incrementally (the cooperative protocol). While the consumer
/// closes, librdkafka names no protocol (its group no longer takes requests, yet the close revokes the assignment
/// through the rebalance callback): `assumed` answers then.
private func rebalancesIncrementally(_ handle: OpaquePointer, assumed: Bool) -> Bool {
    guard let name = rd_kafka_rebalance_protocol(handle) else { return assumed }
    return String(cString: name) == "COOPERATIVE"
}

/// Throws a librdkafka error object as a `KafkaError` (and frees it); nothing when there is none.
private func check(_ error: OpaquePointer?, _ context: String) throws {
    guard let error else { return }
    let text = String(cString: rd_kafka_error_string(error))
    rd_kafka_error_destroy(error)
    throw KafkaError(message: "\(context): \(text)")
}

/// Logs a librdkafka error code; nothing when it is none.
private func logFailure(_ code: rd_kafka_resp_err_t, _ message: Logger.Message, _ logger: Logger) {
    guard code != RD_KAFKA_RESP_ERR_NO_ERROR else { return }
    logger.error(message, metadata: ["error": "\(String(cString: rd_kafka_err2str(code)))"])
}

/// Logs a librdkafka error object (and frees it); nothing when there is none.
private func logFailure(_ error: OpaquePointer?, _ message: Logger.Message, _ logger: Logger) {
    do {
        try check(error, "\(message)")
    } catch {
        logger.error(message, metadata: ["error": "\(error)"])
    }
}

/// librdkafka's own log lines, through the consumer's logger rather than straight to standard error.
private func consumerLogCallback(handle: OpaquePointer?, level: Int32, facility: UnsafePointer<CChar>?, text: UnsafePointer<CChar>?) {
    guard let handle, let opaque = rd_kafka_opaque(handle) else { return }
    let callbacks = Unmanaged<KafkaConsumer.Callbacks>.fromOpaque(opaque).takeUnretainedValue()
    logLibrdkafka(callbacks.logger, level: level, facility: facility, text: text)
}

/// Logs one librdkafka log line (syslog `level`) at the matching swift-log level.
func logLibrdkafka(_ logger: Logger, level: Int32, facility: UnsafePointer<CChar>?, text: UnsafePointer<CChar>?) {
    let mapped: Logger.Level = switch level {
    case ...3: .error
    case 4: .warning
    case 5: .notice
    case 6: .info
    default: .debug
    }
    logger.log(level: mapped, "\(text.map { String(cString: $0) } ?? "")", metadata: [
        "librdkafka": "\(facility.map { String(cString: $0) } ?? "")"])
}

/// librdkafka's error callback: log it; librdkafka retries by itself.
private func errorCallback(handle: OpaquePointer?, error: Int32, reason: UnsafePointer<CChar>?, opaque: UnsafeMutableRawPointer?) {
    guard let opaque else { return }
    let callbacks = Unmanaged<KafkaConsumer.Callbacks>.fromOpaque(opaque).takeUnretainedValue()
    callbacks.logger.warning("Kafka client error", metadata: ["reason": "\(reason.map { String(cString: $0) } ?? "")"])
}
