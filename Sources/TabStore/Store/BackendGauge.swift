/// A gauge (or counter) a backend reports in `/metrics` beside the common ones (the PostgreSQL store's replication settings),
/// read once per scrape. Labels hold bounded values only (a setting's known values, never names or hosts).
package struct BackendGauge: Sendable, Equatable {
    package let name: String
    package let help: String
    package let labels: [(String, String)]
    package let value: Double
    /// A count that only grows (rendered as a Prometheus counter).
    package let counter: Bool

    package init(name: String, help: String, labels: [(String, String)] = [], value: Double, counter: Bool = false) {
        self.counter = counter
        self.name = name
        self.help = help
        self.labels = labels
        self.value = value
    }

    package static func == (lhs: BackendGauge, rhs: BackendGauge) -> Bool {
        lhs.name == rhs.name && lhs.value == rhs.value && lhs.labels.map { [$0.0, $0.1] } == rhs.labels.map { [$0.0, $0.1] }
    }
}
