import BackbeatCore
import CRdKafka
import Logging
import Synchronization

/// An idempotent Kafka producer: generated or replayed events, and dead letters.
public final class KafkaProducer: @unchecked Sendable {
    // @unchecked: `handle` and `topics` are only touched by the thread that produces; `reports` is a Mutex.

    private let handle: OpaquePointer
    private let reports: Unmanaged<DeliveryReports>
    private var topics: [String: OpaquePointer] = [:]

    /// Counts of delivery reports received so far.
    public struct Deliveries: Sendable {
        public var delivered = 0
        public var failed = 0
        public var lastError: String?
    }

    final class DeliveryReports: Sendable {
        let state = Mutex(Deliveries())
        /// Where librdkafka's own log lines go (nil: standard error, librdkafka's default).
        let logger: Logger?

        init(logger: Logger?) {
            self.logger = logger
        }
    }

    /// A producer; with a `logger`, librdkafka's own log lines go through it instead of standard error.
    public init(brokers: String, extra: KafkaConfiguration = KafkaConfiguration(), logger: Logger? = nil) throws {
        let configuration = KafkaConfiguration([
            "bootstrap.servers": brokers,
            "enable.idempotence": "true",
            "linger.ms": "5",
            "client.id": "backbeat-producer",
        ]).merging(extra)
        (handle, reports) = try makeClient(type: RD_KAFKA_PRODUCER, configuration: configuration, opaque: DeliveryReports(logger: logger)) { conf in
            rd_kafka_conf_set_dr_msg_cb(conf, deliveryCallback)
            if logger != nil { rd_kafka_conf_set_log_cb(conf, producerLogCallback) }
        }
    }

    deinit {
        for topic in topics.values { rd_kafka_topic_destroy(topic) }
        rd_kafka_destroy(handle)
        reports.release()
    }

    /// Queues one message (a nil value is a tombstone) with `headers`, waiting while librdkafka's queue is full.
    public func send(
        topic: String, key: [UInt8]?, value: [UInt8]?, headers: [(name: String, value: [UInt8])] = [],
        partition: Int32 = RD_KAFKA_PARTITION_UA
    ) throws {
        let topicHandle = try topicHandle(topic)
        while true {
            let code = value.withOptionalBytes { valueBytes in
                key.withOptionalBytes { keyBytes in
                    produce(topicHandle, partition: partition, key: keyBytes, value: valueBytes, headers: headers)
                }
            }
            if code == RD_KAFKA_RESP_ERR_NO_ERROR { break }
            guard code == RD_KAFKA_RESP_ERR__QUEUE_FULL else { throw KafkaError(code, context: "cannot produce to \(topic)") }
            rd_kafka_poll(handle, 100)
        }
        rd_kafka_poll(handle, 0)
    }

    /// One `rd_kafka_produceva` call; librdkafka copies the payloads and owns the header list once it succeeds.
    private func produce(
        _ topic: OpaquePointer, partition: Int32, key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer?,
        headers: [(name: String, value: [UInt8])]
    ) -> rd_kafka_resp_err_t {
        var fields: [rd_kafka_vu_t] = []
        func field(_ type: rd_kafka_vtype_t, _ set: (inout rd_kafka_vu_t) -> Void) {
            var vu = rd_kafka_vu_t()
            vu.vtype = type
            set(&vu)
            fields.append(vu)
        }
        field(RD_KAFKA_VTYPE_RKT) { $0.u.rkt = topic }
        field(RD_KAFKA_VTYPE_PARTITION) { $0.u.i32 = partition }
        field(RD_KAFKA_VTYPE_MSGFLAGS) { $0.u.i = RD_KAFKA_MSG_F_COPY }
        field(RD_KAFKA_VTYPE_VALUE) {
            $0.u.mem.ptr = UnsafeMutableRawPointer(mutating: value?.baseAddress)
            $0.u.mem.size = value?.count ?? 0
        }
        field(RD_KAFKA_VTYPE_KEY) {
            $0.u.mem.ptr = UnsafeMutableRawPointer(mutating: key?.baseAddress)
            $0.u.mem.size = key?.count ?? 0
        }
        var headerList: OpaquePointer?
        if !headers.isEmpty {
            let list = rd_kafka_headers_new(headers.count)!
            for header in headers {
                header.value.withUnsafeBytes { _ = rd_kafka_header_add(list, header.name, -1, $0.baseAddress, $0.count) }
            }
            headerList = list
            field(RD_KAFKA_VTYPE_HEADERS) { $0.u.headers = list }
        }
        guard let error = rd_kafka_produceva(handle, fields, fields.count) else { return RD_KAFKA_RESP_ERR_NO_ERROR }
        defer { rd_kafka_error_destroy(error) }
        if let headerList { rd_kafka_headers_destroy(headerList) }
        return rd_kafka_error_code(error)
    }

    /// Delivery reports received so far.
    public var deliveries: Deliveries {
        reports.takeUnretainedValue().state.withLock { $0 }
    }

    /// Waits until every queued message is delivered or failed, up to `timeoutMs`; returns the delivery counts.
    @discardableResult
    public func flush(timeoutMs: Int32 = 60_000) throws -> Deliveries {
        let error = rd_kafka_flush(handle, timeoutMs)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(error, context: "messages still undelivered after \(timeoutMs) ms") }
        return deliveries
    }

    private func topicHandle(_ name: String) throws -> OpaquePointer {
        if let existing = topics[name] { return existing }
        guard let created = rd_kafka_topic_new(handle, name, nil) else {
            throw KafkaError(rd_kafka_last_error(), context: "cannot open topic \(name)")
        }
        topics[name] = created
        return created
    }
}

private func producerLogCallback(handle: OpaquePointer?, level: Int32, facility: UnsafePointer<CChar>?, text: UnsafePointer<CChar>?) {
    guard let handle, let opaque = rd_kafka_opaque(handle) else { return }
    let reports = Unmanaged<KafkaProducer.DeliveryReports>.fromOpaque(opaque).takeUnretainedValue()
    guard let logger = reports.logger else { return }
    logLibrdkafka(logger, level: level, facility: facility, text: text)
}

private func deliveryCallback(handle: OpaquePointer?, message: UnsafePointer<rd_kafka_message_t>?, opaque: UnsafeMutableRawPointer?) {
    guard let message, let opaque else { return }
    let reports = Unmanaged<KafkaProducer.DeliveryReports>.fromOpaque(opaque).takeUnretainedValue()
    let error = message.pointee.err
    reports.state.withLock { state in
        if error == RD_KAFKA_RESP_ERR_NO_ERROR {
            state.delivered += 1
        } else {
            state.failed += 1
            state.lastError = String(cString: rd_kafka_err2str(error))
        }
    }
}

extension Optional where Wrapped == [UInt8] {
    func withOptionalBytes<R>(_ body: (UnsafeRawBufferPointer?) -> R) -> R {
        switch self {
        case .some(let bytes): bytes.withUnsafeBytes { body($0) }
        case .none: body(nil)
        }
    }
}
