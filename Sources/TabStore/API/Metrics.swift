import TabStoreHTTP
import TabStoreStore
import TabStoreSupport

/// Prometheus metrics (text exposition format 0.0.4). One lock; every update is a few additions.
package final class Metrics: Sendable, ServerObserver {
    static let latencyBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
    static let batchBuckets: [Double] = [1, 2, 4, 8, 16, 32, 64, 128, 256]
    static let commitBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]

    struct Histogram {
        var buckets: [Double]
        var counts: [Int]
        var sum = 0.0
        var count = 0

        init(_ buckets: [Double]) {
            self.buckets = buckets
            self.counts = Array(repeating: 0, count: buckets.count)
        }

        mutating func observe(_ value: Double) {
            for index in buckets.indices where value <= buckets[index] { counts[index] += 1 }
            sum += value
            count += 1
        }
    }

    private struct RequestKey: Hashable, Comparable {
        let route: String
        let method: String
        let status: Int

        static func < (lhs: RequestKey, rhs: RequestKey) -> Bool { (lhs.route, lhs.method, lhs.status) < (rhs.route, rhs.method, rhs.status) }
    }

    private struct State {
        var requests: [RequestKey: Int] = [:]
        var latency: [String: Histogram] = [:]
        var batches = Histogram(Metrics.batchBuckets)
        var commits = Histogram(Metrics.commitBuckets)
        var serverResponses: [Int: Int] = [:]
        var openConnections = 0
        var replays = 0
        var eventsSent = 0
        var eventsCoalesced = 0
    }

    /// All counters; every thread updates them under this lock.
    private let state = Locked(State())

    package init() {}

    /// The methods that get a label of their own; any other becomes `other`.
    static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    /// A request method as a label or log field: one of `knownMethods`, else `other`. A client picks the
    /// method, so using it raw let 2,000 junk methods grow /metrics to 8 MB (unbounded label cardinality).
    package static func methodLabel(_ method: String) -> String {
        knownMethods.contains(method) ? method : "other"
    }

    package func recordRequest(route: String, method: String, status: Int, seconds: Double) {
        let method = Self.methodLabel(method)
        state.withLock { state in
            state.requests[RequestKey(route: route, method: method, status: status), default: 0] += 1
            state.latency[route, default: Histogram(Self.latencyBuckets)].observe(seconds)
        }
    }

    package func recordBatch(size: Int, seconds: Double) {
        state.withLock { state in
            state.batches.observe(Double(size))
            state.commits.observe(seconds)
        }
    }

    package func serverResponded(status: Int, reason: String) {
        state.withLock { $0.serverResponses[status, default: 0] += 1 }
    }

    /// A write repeated with its `Idempotency-Key` got its first answer again.
    package func recordReplay() { state.withLock { $0.replays += 1 } }

    /// Change-feed events written to streams (customizations, token-expired, shutdown; not comments).
    package func recordEventsSent(_ count: Int) { state.withLock { $0.eventsSent += count } }

    /// A customization waiting for a change-feed stream was replaced by a newer one before it was sent (its
    /// reader was still being written the previous event, or two commits came within one loop turn).
    package func recordEventCoalesced() { state.withLock { $0.eventsCoalesced += 1 } }

    package func connectionOpened() { state.withLock { $0.openConnections += 1 } }
    package func connectionClosed() { state.withLock { $0.openConnections -= 1 } }

    /// Gauges read by the caller when rendering: stored counts and who follows changes.
    package struct Gauges: Sendable {
        package var customizations = 0
        package var historyRows = 0
        package var streams = 0
        package var longPolls = 0
        /// Each read cache by name.
        package var caches: [(name: String, statistics: CacheStatistics)] = []
        /// The backend's own gauges (`TabStoreBackend.backendGauges`).
        package var backend: [BackendGauge] = []

        package init(customizations: Int = 0, historyRows: Int = 0, streams: Int = 0, longPolls: Int = 0) {
            self.customizations = customizations
            self.historyRows = historyRows
            self.streams = streams
            self.longPolls = longPolls
        }
    }

    /// The exposition text; `customizations` is the stored count, read by the caller.
    package func render(customizations: Int) -> String { render(Gauges(customizations: customizations)) }

    /// The exposition text with `gauges`, read by the caller.
    package func render(_ gauges: Gauges) -> String {
        let snapshot = state.withLock { $0 }
        var out = ""
        out += "# HELP tabstore_http_requests_total HTTP requests answered, by route pattern, method and status.\n"
        out += "# TYPE tabstore_http_requests_total counter\n"
        for key in snapshot.requests.keys.sorted() {
            out +=
                "tabstore_http_requests_total{route=\"\(escape(key.route))\",method=\"\(escape(key.method))\",status=\"\(key.status)\"} \(snapshot.requests[key]!)\n"
        }
        out += "# HELP tabstore_http_request_duration_seconds Time from a complete request to its response, by route pattern.\n"
        out += "# TYPE tabstore_http_request_duration_seconds histogram\n"
        for route in snapshot.latency.keys.sorted() {
            out += histogram("tabstore_http_request_duration_seconds", snapshot.latency[route]!, labels: "route=\"\(escape(route))\"")
        }
        out += "# HELP tabstore_http_server_errors_total Responses the server produced itself (framing, limits, timeouts, overload), by status.\n"
        out += "# TYPE tabstore_http_server_errors_total counter\n"
        for status in snapshot.serverResponses.keys.sorted() {
            out += "tabstore_http_server_errors_total{status=\"\(status)\"} \(snapshot.serverResponses[status]!)\n"
        }
        out += "# HELP tabstore_http_open_connections Open client connections.\n# TYPE tabstore_http_open_connections gauge\n"
        out += "tabstore_http_open_connections \(snapshot.openConnections)\n"
        out += "# HELP tabstore_store_write_batch_size Writes committed together in one transaction (group commit).\n"
        out += "# TYPE tabstore_store_write_batch_size histogram\n"
        out += histogram("tabstore_store_write_batch_size", snapshot.batches, labels: nil)
        out += "# HELP tabstore_store_commit_duration_seconds Time to run and commit one batch.\n"
        out += "# TYPE tabstore_store_commit_duration_seconds histogram\n"
        out += histogram("tabstore_store_commit_duration_seconds", snapshot.commits, labels: nil)
        out += "# HELP tabstore_customizations Stored customizations (all apps).\n# TYPE tabstore_customizations gauge\n"
        out += "tabstore_customizations \(gauges.customizations)\n"
        out += "# HELP tabstore_history_rows Kept history rows (all apps and users).\n# TYPE tabstore_history_rows gauge\n"
        out += "tabstore_history_rows \(gauges.historyRows)\n"
        out += "# HELP tabstore_idempotent_replays_total Writes repeated with their Idempotency-Key that got the first answer again.\n"
        out += "# TYPE tabstore_idempotent_replays_total counter\ntabstore_idempotent_replays_total \(snapshot.replays)\n"
        out += "# HELP tabstore_feed_streams Open change-feed streams.\n# TYPE tabstore_feed_streams gauge\n"
        out += "tabstore_feed_streams \(gauges.streams)\n"
        out += "# HELP tabstore_feed_events_total Change-feed events sent (customization, token-expired, shutdown).\n"
        out += "# TYPE tabstore_feed_events_total counter\ntabstore_feed_events_total \(snapshot.eventsSent)\n"
        out += "# HELP tabstore_feed_events_coalesced_total Change-feed customizations replaced by a newer one before they were sent.\n"
        out += "# TYPE tabstore_feed_events_coalesced_total counter\ntabstore_feed_events_coalesced_total \(snapshot.eventsCoalesced)\n"
        out += "# HELP tabstore_long_polls Long polls waiting for a change.\n# TYPE tabstore_long_polls gauge\n"
        out += "tabstore_long_polls \(gauges.longPolls)\n"
        let caches = gauges.caches
        func perCache(_ name: String, _ help: String, _ type: String, _ value: (CacheStatistics) -> Int) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for cache in caches { out += "\(name){cache=\"\(cache.name)\"} \(value(cache.statistics))\n" }
        }
        perCache("tabstore_cache_entries", "Entries kept by each read cache.", "gauge") { $0.entries }
        perCache("tabstore_cache_bytes", "Bytes the entries of each read cache count against its budget (--cache-bytes).", "gauge") { $0.cost }
        perCache("tabstore_cache_hits_total", "Reads each read cache answered.", "counter") { $0.hits }
        perCache("tabstore_cache_misses_total", "Reads each read cache could not answer.", "counter") { $0.misses }
        perCache("tabstore_cache_not_admitted_total", "Values read after a miss that a full cache did not keep (their key had not missed lately).",
                 "counter") { $0.refused }
        var described: Set<String> = []
        for gauge in gauges.backend {
            if described.insert(gauge.name).inserted { out += "# HELP \(gauge.name) \(gauge.help)\n# TYPE \(gauge.name) \(gauge.counter ? "counter" : "gauge")\n" }
            let labels = gauge.labels.isEmpty ? "" : "{" + gauge.labels.map { "\($0.0)=\"\(escape($0.1))\"" }.joined(separator: ",") + "}"
            out += "\(gauge.name)\(labels) \(format(gauge.value))\n"
        }
        return out
    }

    private func histogram(_ name: String, _ histogram: Histogram, labels: String?) -> String {
        let prefix = labels.map { $0 + "," } ?? ""
        var out = ""
        for (bound, count) in zip(histogram.buckets, histogram.counts) {
            out += "\(name)_bucket{\(prefix)le=\"\(format(bound))\"} \(count)\n"
        }
        out += "\(name)_bucket{\(prefix)le=\"+Inf\"} \(histogram.count)\n"
        let suffix = labels.map { "{\($0)}" } ?? ""
        out += "\(name)_sum\(suffix) \(histogram.sum)\n"
        out += "\(name)_count\(suffix) \(histogram.count)\n"
        return out
    }

    private func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    private func escape(_ value: String) -> String {
        value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"").replacing("\n", with: "\\n")
    }
}
