/// Why a request could not be framed. Every case is answered with its status and `Connection: close`,
/// since after a framing error the next request's start cannot be known (RFC 9112 §9.6).
package struct HTTPParseError: Error, Sendable, Equatable {
    package let status: Int
    package let reason: String

    init(_ status: Int, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    static func bad(_ reason: String) -> HTTPParseError { HTTPParseError(400, reason) }
}

/// Parser limits, part of the server's configuration.
package struct HTTPLimits: Sendable, Equatable {
    /// Longest request line (RFC 9112 §3 recommends supporting at least 8000 octets).
    package var maxRequestLine = 8 * 1024
    /// Largest header block, request line included; beyond it: 431.
    package var maxHeaderBytes = 64 * 1024
    package var maxHeaderCount = 100
    /// Largest body; beyond it: 413, refused before reading it when the length is declared.
    package var maxBodyBytes = 1024 * 1024

    package init() {}
}
