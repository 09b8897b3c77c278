import Foundation
import Glibc
import Testing
@testable import TabStoreSupport
import TabStoreTestSupport

/// Errors, CORS, probes, metrics and the harness itself. The request errors run both in-process and live:
/// the same requests must get the same answers whether or not a server is in between.
extension APITests {
    // MARK: Request errors

    @Test("creating an app whose id exists is 409", arguments: Transport.allCases)
    func duplicateApp(_ transport: Transport) async throws {
        try await withAPI(transport) { api in
            _ = try await api.makeApp("app", schema: Seeds.music)
            #expect(try await api.send(.post("/v1/apps").bearer(api.admin).json(#"{"id": "app", "name": "again"}"#)).status == 409)
        }
    }

    @Test("a member the API does not define is 400 unknown-field", arguments: Transport.allCases)
    func unknownField(_ transport: Transport) async throws {
        try await withAPI(transport) { api in
            let malformed = try await api.send(.post("/v1/apps").bearer(api.admin).json(#"{"id": "x", "name": "y", "colour": 1}"#))
            #expect(malformed.status == 400)
            #expect(malformed.codes == ["unknown-field"])
        }
    }

    @Test("a body that is not JSON is 400", arguments: Transport.allCases)
    func malformedJSON(_ transport: Transport) async throws {
        try await withAPI(transport) { api throws in
            #expect(try await api.send(.post("/v1/apps").bearer(api.admin).json(#"{"id": "#)).status == 400)
        }
    }

    @Test("an app id outside the allowed characters is 422", arguments: Transport.allCases)
    func invalidAppId(_ transport: Transport) async throws {
        try await withAPI(transport) { api throws in
            #expect(try await api.send(.post("/v1/apps").bearer(api.admin).json(#"{"id": "bad id!", "name": "y"}"#)).status == 422)
        }
    }

    @Test("a body sent as text/plain is 415", arguments: Transport.allCases)
    func unsupportedMediaType(_ transport: Transport) async throws {
        try await withAPI(transport) { api throws in
            #expect(try await api.send(.post("/v1/apps").bearer(api.admin).contentType("text/plain").json("{}")).status == 415)
        }
    }

    @Test("a path no route serves is 404", arguments: Transport.allCases)
    func noRoute(_ transport: Transport) async throws {
        try await withAPI(transport) { api throws in
            #expect(try await api.send(.get("/v1/nothing").bearer(api.admin)).status == 404)
        }
    }

    @Test("a customization of an app that does not exist is 404", arguments: Transport.allCases)
    func unknownApp(_ transport: Transport) async throws {
        try await withAPI(transport) { api throws in
            #expect(try await api.send(.get("/v1/apps/nope/users/u/customization").bearer(api.admin)).status == 404)
        }
    }

    @Test("a method the path lacks is 405 with the methods it has in Allow", arguments: Transport.allCases)
    func methodNotAllowed(_ transport: Transport) async throws {
        try await withAPI(transport) { api in
            let notAllowed = try await api.send(.patch("/v1/apps").bearer(api.admin))
            #expect(notAllowed.status == 405)
            #expect(notAllowed.header("Allow")?.contains("POST") == true)
        }
    }

    // MARK: CORS and probes

    @Test("a CORS preflight from an allowed origin is 204 with the origin and the path's methods", arguments: Transport.allCases)
    func corsPreflight(_ transport: Transport) async throws {
        try await withAPI(transport) { api in
            _ = try await api.makeApp("app", schema: Seeds.music)
            let preflight = try await api.send(.options("/v1/apps/app/users/u/customization").origin("https://app.example")
                .header("Access-Control-Request-Method", "PATCH"))
            #expect(preflight.status == 204)
            #expect(preflight.header("Access-Control-Allow-Origin") == "https://app.example")
            #expect(preflight.header("Access-Control-Allow-Methods")?.contains("PATCH") == true)
        }
    }

    @Test("an origin that is not allowed gets no Access-Control-Allow-Origin", arguments: Transport.allCases)
    func foreignOrigin(_ transport: Transport) async throws {
        try await withAPI(transport) { api in
            let foreign = try await api.send(.get("/healthz").origin("https://evil.example"))
            #expect(foreign.header("Access-Control-Allow-Origin") == nil)
        }
    }

    @Test("HEAD /healthz is 200", arguments: Transport.allCases)
    func headHealthz(_ transport: Transport) async throws {
        try await withAPI(transport) { api throws in
            #expect(try await api.send(.head("/healthz")).status == 200)
        }
    }

    @Test("/readyz is 200 while the service can serve", arguments: Transport.allCases)
    func ready(_ transport: Transport) async throws {
        try await withAPI(transport) { api throws in
            #expect(try await api.send(.get("/readyz")).status == 200)
        }
    }

    @Test("/readyz answers 503 while the server drains")
    func readyWhileDraining() async throws {
        try await withInProcessAPI { api in
            #expect(await api.send(.get("/readyz")).status == 200)
            api.serverState.startDraining()
            let draining = await api.send(.get("/readyz"))
            #expect(draining.status == 503)
            #expect(draining.header("Content-Type") == "application/problem+json")
        }
    }

    @Test("/openapi.yaml serves the OpenAPI 3.1 document", arguments: Transport.allCases)
    func openAPIDocument(_ transport: Transport) async throws {
        try await withAPI(transport) { api in
            let spec = try await api.send(.get("/openapi.yaml"))
            #expect(spec.text.hasPrefix("openapi: 3.1.0"))
        }
    }

    // MARK: Metrics

    @Test("/metrics counts requests by route, method and status")
    func metricsCountRequests() async throws {
        try await withLiveService { live in
            _ = try await live.makeApp("app", schema: Seeds.music)
            #expect(try await live.send(.post("/v1/apps").bearer(live.admin).json(#"{"id": "app", "name": "again"}"#)).status == 409)
            let metrics = try await live.send(.get("/metrics"))
            #expect(metrics.text.contains("tabstore_http_requests_total{route=\"/v1/apps\",method=\"POST\",status=\"409\"} 1"))
        }
    }

    @Test("the writer reports its batches to the service's metrics")
    func metricsWriteBatches() async throws {
        try await withLiveService { live in
            _ = try await live.makeApp("app", schema: Seeds.music)
            let metrics = try await live.send(.get("/metrics"))
            let batchCount = metrics.text.split(separator: "\n").first { $0.hasPrefix("tabstore_store_write_batch_size_count ") }
                .flatMap { Int($0.split(separator: " ").last ?? "") }
            #expect((batchCount ?? 0) >= 1, "\(String(describing: batchCount))")
        }
    }

    @Test("the customization gauge is 0 before any user writes")
    func metricsCustomizationGauge() async throws {
        try await withLiveService { live in
            _ = try await live.makeApp("app", schema: Seeds.music)
            #expect(try await live.send(.get("/metrics")).text.contains("tabstore_customizations 0"))
        }
    }

    // MARK: The harness

    private struct BodyFailed: Error {}

    @Test("withLiveService stops the server when the body throws: its port refuses connections afterwards")
    func withLiveServiceStopsOnThrow() async throws {
        var port = 0
        await #expect(throws: BodyFailed.self) {
            try await withLiveService { live in
                port = live.port
                #expect(try await live.send(.get("/healthz")).status == 200)
                throw BodyFailed()
            }
        }
        #expect(port > 0)
        let observed = port
        let refused = try await offPool { () -> Int32? in
            do {
                _ = try RawClient(port: observed, timeout: 1)
                return nil
            } catch let error as SystemError {
                return error.errno
            } catch {
                return -1
            }
        }
        #expect(refused == ECONNREFUSED, "connecting to port \(observed) after the body threw")
    }
}
