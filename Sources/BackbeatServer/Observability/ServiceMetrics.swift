import BackbeatCore
import CoreMetrics
import Prometheus
import Synchronization

/// The service's metrics, recorded through swift-metrics into one Prometheus registry that `GET /metrics` renders.
/// Names and labels are listed in docs/operations.md; label values come from bounded sets only (topics, partitions,
/// rejection reasons, route patterns, status codes), never from event contents.
public final class ServiceMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    /// Counters and gauges with labels, made once per label set.
    private let counters = Mutex<[Key: CoreMetrics.Counter]>([:])
    private let gauges = Mutex<[Key: CoreMetrics.Gauge]>([:])
    private let timers = Mutex<[Key: CoreMetrics.Timer]>([:])
    /// The metrics recorded on every request, by typed labels (`LabeledMetric`); the others by name and labels.
    private let requests: LabeledMetric<RequestLabels, (count: CoreMetrics.Counter, duration: CoreMetrics.Timer)>
    private let answerLookups: LabeledMetric<String, CoreMetrics.Counter>
    private let storedPartLookups: LabeledMetric<String, CoreMetrics.Counter>

    private struct RequestLabels: Hashable, Sendable {
        var route: String
        var method: String
        var status: Int
    }

    private struct Key: Hashable {
        var name: String
        var labels: [String]
    }

    public init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets[Self.resumeWait] = [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 900, 3600].map { .milliseconds(Int64($0 * 1000)) }
        self.factory = factory
        requests = LabeledMetric { [factory] labels in
            let dimensions = [("method", labels.method), ("route", labels.route), ("status", String(labels.status))]
            return (CoreMetrics.Counter(label: "backbeat_http_requests_total", dimensions: dimensions, factory: factory),
                    CoreMetrics.Timer(label: "backbeat_http_request_duration_seconds", dimensions: dimensions, factory: factory))
        }
        answerLookups = LabeledMetric { [factory] outcome in
            CoreMetrics.Counter(label: "backbeat_answer_cache_lookups_total", dimensions: [("outcome", outcome)], factory: factory)
        }
        storedPartLookups = LabeledMetric { [factory] outcome in
            CoreMetrics.Counter(label: "backbeat_stored_part_lookups_total", dimensions: [("outcome", outcome)], factory: factory)
        }
    }

    /// The Prometheus text exposition of every metric.
    public func exposition() -> [UInt8] {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return buffer
    }

    // MARK: - Ingest

    /// One poll's outcomes, added to `backbeat_events_{consumed,accepted,rejected}_total` (consumed is derived:
    /// accepted plus rejected). One dictionary update per message.
    struct PollTally {
        var accepted: [String: Int] = [:]
        var rejected: [RejectionKey: Int] = [:]
        /// Resent events not counted again.
        var duplicates: [String: Int] = [:]
        /// Events counted though older than the dedup window (in `accepted` too).
        var beyondWindow: [String: Int] = [:]

        struct RejectionKey: Hashable {
            var topic: String
            var reason: String
        }

        mutating func add(topic: String, _ outcome: IngestLedger.Outcome) {
            switch outcome {
            case .accepted: accepted[topic, default: 0] += 1
            case .acceptedBeyondWindow:
                accepted[topic, default: 0] += 1
                beyondWindow[topic, default: 0] += 1
            case .duplicate: duplicates[topic, default: 0] += 1
            case .rejected(let reason): rejected[RejectionKey(topic: topic, reason: reason.rawValue), default: 0] += 1
            case .ignored: break
            }
        }

        var consumed: [String: Int] {
            rejected.reduce(into: accepted.merging(duplicates, uniquingKeysWith: +)) { $0[$1.key.topic, default: 0] += $1.value }
        }
    }

    /// Exports the per-topic counters of the ingest at zero, so that a rate of them is defined before the first
    /// event of their kind (a resend, an event beyond the dedup window) arrives.
    func startCounting(topics: [String]) {
        for topic in topics {
            for name in ["backbeat_events_consumed_total", "backbeat_events_accepted_total", "backbeat_events_duplicate_total",
                         "backbeat_events_beyond_dedup_window_total"] {
                counter(name, ["topic": topic]).increment(by: 0)
            }
        }
    }

    func record(_ tally: PollTally) {
        for (topic, count) in tally.consumed { counter("backbeat_events_consumed_total", ["topic": topic]).increment(by: count) }
        for (topic, count) in tally.accepted { counter("backbeat_events_accepted_total", ["topic": topic]).increment(by: count) }
        for (key, count) in tally.rejected {
            counter("backbeat_events_rejected_total", ["topic": key.topic, "reason": key.reason]).increment(by: count)
        }
        for (topic, count) in tally.duplicates { counter("backbeat_events_duplicate_total", ["topic": topic]).increment(by: count) }
        for (topic, count) in tally.beyondWindow {
            counter("backbeat_events_beyond_dedup_window_total", ["topic": topic]).increment(by: count)
        }
    }

    /// How a flush ended: "committed", "failed" (retried) or "conflict" (another consumer moved the offset).
    func recordFlush(outcome: String, duration: Duration, rows: Int) {
        counter("backbeat_flushes_total", ["outcome": outcome]).increment()
        timer("backbeat_flush_duration_seconds", ["outcome": outcome]).recordNanoseconds(duration.nanoseconds)
        if outcome == "committed" { counter("backbeat_flush_rows_total", [:]).increment(by: rows) }
    }

    /// A pass of the store's upkeep (`MaintenanceService`) by outcome (`idle`, `worked`, `failed`), and the month
    /// partitions or months it handled by kind of work (`month_rows`, `detail_rolled`, `dropped`).
    func recordMaintenancePass(outcome: String, months: [String: Int]) {
        counter("backbeat_maintenance_passes_total", ["outcome": outcome]).increment()
        for (work, count) in months where count > 0 {
            counter("backbeat_maintenance_months_total", ["work": work]).increment(by: count)
        }
    }

    /// Artist-days of the full-dimension tables whose deltas a compaction pass merged into their blocks.
    func recordDetailCompacted(artistDays: Int) {
        counter("backbeat_detail_compacted_total", [:]).increment(by: artistDays)
    }

    /// An artist query sent to the instance holding the artist: "answered" there, or "failed" (answered here).
    func recordForward(outcome: String) {
        counter("backbeat_queries_forwarded_total", ["outcome": outcome]).increment()
    }

    /// A lookup of an artist endpoint's answer in `AnswerCache`: `hit` (kept under the current stamp), `shared`
    /// (another request was making it) or `miss`.
    func recordAnswerLookup(_ outcome: String) {
        answerLookups[outcome].increment()
    }

    /// A lookup of what an answer from memory reads from PostgreSQL among the parts kept (`StoredParts`): `hit`
    /// (kept under the current stamp; PostgreSQL is not asked) or `miss`.
    func recordStoredPartLookup(hit: Bool) {
        storedPartLookups[hit ? "hit" : "miss"].increment()
    }

    /// Bytes `AnswerCache` holds (large answers compressed).
    func recordAnswerCacheBytes(_ bytes: Int) {
        gauge("backbeat_answer_cache_bytes", [:]).record(bytes)
    }

    func recordDeadLetters(_ count: Int) {
        counter("backbeat_dead_letters_total", [:]).increment(by: count)
    }

    /// Per owned partition: the high watermark as last fetched less the stored offset.
    static let lagMessages = "backbeat_consumer_lag_messages"
    /// Per owned partition: seconds since the newest counted event occurred.
    static let eventTimeLag = "backbeat_event_time_lag_seconds"

    /// Sets the gauge `name` of each partition in `values` and removes its series of partitions no longer there.
    func recordPerPartition(_ name: String, _ values: [(TopicPartition, Double)]) {
        let current = Set(values.map { Key(name: name, labels: ["partition", String($0.0.partition), "topic", $0.0.topic]) })
        let gone = gauges.withLock { gauges -> [CoreMetrics.Gauge] in
            let stale = gauges.keys.filter { $0.name == name && !current.contains($0) }
            return stale.compactMap { gauges.removeValue(forKey: $0) }
        }
        for gauge in gone { gauge.destroy() }
        for (partition, value) in values {
            gauge(name, ["topic": partition.topic, "partition": String(partition.partition)]).record(value)
        }
    }

    /// A gap found on a partition: counted, with the offsets deleted unread when they are known.
    func recordOffsetGap(_ gap: OffsetGap) {
        let labels = ["topic": gap.topicPartition.topic]
        counter("backbeat_offset_gaps_total", labels).increment()
        if let missing = gap.missingCount { counter("backbeat_offset_gap_messages_total", labels).increment(by: Int(missing)) }
    }

    /// How a revocation handed partitions over: "flushed" (their consumed work first), "unflushed" (not in time:
    /// the next owner consumes it again) or "lost" (the group had given them away already).
    func recordHandOver(outcome: String) {
        counter("backbeat_partition_handovers_total", ["outcome": outcome]).increment()
    }

    /// How far the stored offsets trail what was consumed (the most of any owned partition, in offsets and in
    /// seconds since the oldest unflushed message was consumed), and how many partitions wait at a gap.
    func recordStoredOffsetTrail(messages: Int64, seconds: Double, waitingPartitions: Int) {
        gauge("backbeat_stored_offset_trail_messages", [:]).record(messages)
        gauge("backbeat_stored_offset_trail_seconds", [:]).record(seconds)
        gauge("backbeat_partitions_waiting_at_gap", [:]).record(waitingPartitions)
    }

    static let resumeWait = "backbeat_partition_resume_wait_seconds"

    /// How long the first message consumed from a partition after its assignment had waited (`IngestLedger.Resumption`).
    func recordResumption(topic: String, waited: Duration) {
        timer(Self.resumeWait, ["topic": topic]).recordNanoseconds(waited.nanoseconds)
    }

    func recordIngestState(pendingBytes: Int, paused: Bool, dedupIDs: Int, dedupBytes: Int, lastFlushAgeSeconds: Double) {
        gauge("backbeat_last_flush_age_seconds", [:]).record(lastFlushAgeSeconds)
        gauge("backbeat_pending_bytes", [:]).record(pendingBytes)
        gauge("backbeat_ingest_paused", [:]).record(paused ? 1 : 0)
        gauge("backbeat_dedup_ids", [:]).record(dedupIDs)
        gauge("backbeat_dedup_bytes", [:]).record(dedupBytes)
    }

    /// Ids forgotten early for the dedup budget since the start.
    func recordDedupForgotten(total: Int) {
        gauge("backbeat_dedup_ids_forgotten_early", [:]).record(total)
    }

    /// The dedup windows of assigned partitions were loaded: in how long, with how many ids.
    func recordDedupLoad(seconds: Double, ids: Int) {
        gauge("backbeat_dedup_load_seconds", [:]).record(seconds)
        counter("backbeat_dedup_ids_loaded_total", [:]).increment(by: ids)
    }

    func recordMemory(dayBuckets: Int, bytes: Int) {
        gauge("backbeat_memory_day_buckets", [:]).record(dayBuckets)
        gauge("backbeat_memory_bytes", [:]).record(bytes)
    }

    // MARK: - HTTP

    func recordRequest(route: String, method: String, status: Int, duration: Duration) {
        let handles = requests[RequestLabels(route: route, method: method, status: status)]
        handles.count.increment()
        handles.duration.recordNanoseconds(duration.nanoseconds)
    }

    // MARK: - Handles

    private func counter(_ name: String, _ labels: [String: String]) -> CoreMetrics.Counter {
        Self.cached(in: counters, name, labels) { CoreMetrics.Counter(label: name, dimensions: $0, factory: factory) }
    }

    private func gauge(_ name: String, _ labels: [String: String]) -> CoreMetrics.Gauge {
        Self.cached(in: gauges, name, labels) { CoreMetrics.Gauge(label: name, dimensions: $0, factory: factory) }
    }

    private func timer(_ name: String, _ labels: [String: String]) -> CoreMetrics.Timer {
        Self.cached(in: timers, name, labels) { CoreMetrics.Timer(label: name, dimensions: $0, factory: factory) }
    }

    /// The handle for `name` and `labels` in `cache`, made on first use.
    private static func cached<Handle>(
        in cache: borrowing Mutex<[Key: Handle]>, _ name: String, _ labels: [String: String],
        make: ([(String, String)]) -> Handle
    ) -> Handle {
        let (key, dimensions) = Self.key(name, labels)
        return cache.withLock { handles in
            if let existing = handles[key] { return existing }
            let made = make(dimensions)
            handles[key] = made
            return made
        }
    }

    /// Labels sorted by name, so that one label set is one key whatever the dictionary's order.
    private static func key(_ name: String, _ labels: [String: String]) -> (Key, [(String, String)]) {
        let sorted = labels.sorted { $0.key < $1.key }
        return (Key(name: name, labels: sorted.flatMap { [$0.key, $0.value] }), sorted.map { ($0.key, $0.value) })
    }
}
