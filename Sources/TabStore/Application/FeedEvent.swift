/// The change feed's wire format: server-sent events (https://html.spec.whatwg.org/multipage/server-sent-events.html).
/// Every event has a `data` line, since a client dispatches no event without one.
package enum FeedEvent {
    /// Sent first: a client that loses the stream reconnects after a second (`retry`, in milliseconds).
    package static let opening = Array("retry: 1000\n\n".utf8)

    /// A comment line, so idle proxies and clients see the stream is alive.
    package static let keepAlive = Array(": keep-alive\n\n".utf8)

    /// `event: customization`, `id: <ETag without quotes>`, `data: <the whole customization as one line>`.
    package static func customization(id: String, document: [UInt8]) -> [UInt8] {
        var event = Array("event: customization\nid: \(id)\ndata: ".utf8)
        event.reserveCapacity(event.count + document.count + 2)
        // A stored document is compact JSON (no line breaks); should one hold any, they can only be whitespace
        // between tokens (JSON strings escape them), so a space keeps it the same JSON on one line.
        for byte in document { event.append(byte == 0x0A || byte == 0x0D ? 0x20 : byte) }
        event.append(contentsOf: "\n\n".utf8)
        return event
    }

    package static let tokenExpired = Array("event: token-expired\ndata: {\"detail\":\"the token expired; reconnect with a fresh one\"}\n\n".utf8)

    /// `token-expired` too (the change feed has one event for an authorization that ended, docs/devices.md): the token no longer verifies.
    package static let credentialsRevoked = Array(
        "event: token-expired\ndata: {\"detail\":\"the token is no longer valid (the app's signing secret was rotated); reconnect with a fresh one\"}\n\n"
            .utf8)

    /// `token-expired` as well: the named operator token that opened the stream was revoked.
    package static let operatorTokenRevoked = Array(
        "event: token-expired\ndata: {\"detail\":\"the operator token was revoked; reconnect with another one\"}\n\n".utf8)

    /// The stream's schema version was retired (the operator raised the app's minimum): the app must be updated.
    package static let schemaVersionRetired = Array(
        "event: schema-version-retired\ndata: {\"detail\":\"this schema version is retired; update the app\"}\n\n".utf8)

    package static let shutdown = Array("event: shutdown\ndata: {\"detail\":\"the server is shutting down; reconnect in a moment\"}\n\n".utf8)
}
