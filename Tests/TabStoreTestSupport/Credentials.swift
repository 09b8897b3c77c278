import Foundation
@testable import TabStoreAuth
@testable import TabStoreSupport

/// One credentials fixture for the API, trust and abuse tests: two apps registered with one schema, and a token
/// for every `Caller` of the first app's user `alice`. Built through the API itself, so it works on any `TestClient`.
package struct Credentials: Sendable {
    /// A registered app: its id and signing secret, and tokens for its users.
    package struct App: Sendable {
        package let id: String
        package let secret: String

        package init(id: String, secret: String) {
            self.id = id
            self.secret = secret
        }

        /// Creates the app and registers its schema.
        /// - Throws: `SystemError` when the API refuses either step.
        package static func register(on client: any TestClient, id: String, schema: String) async throws -> App {
            App(id: id, secret: try await client.makeApp(id, schema: schema))
        }

        /// An HS256 token naming `user` of this app, issued at `issuedAt` and valid for `expiresIn` seconds.
        package func token(for user: String, expiresIn: Int = 3600, issuedAt: Int = Credentials.now(), signedWith other: String? = nil) -> String {
            JWT.sign(
                subject: Identifier(user), audience: Identifier(id), expiresAt: issuedAt + expiresIn, issuedAt: issuedAt, secret: other ?? secret)
        }

        /// The path of `user`'s resources (`user` percent-encoded by the caller where needed).
        package func userPath(_ user: String) -> String { "/v1/apps/\(id)/users/\(user)" }
    }

    package static let user = "alice"
    package static let otherUser = "mallory"

    /// `app.one`: the app whose user the tokens name.
    package let app: App
    /// `app.two`: the same schema, another secret.
    package let otherApp: App
    /// The operator's token of the client the apps were registered on.
    package let admin: String
    /// When the tokens were issued (seconds since 1970).
    package let issuedAt: Int

    package static func now() -> Int { Int(Date().timeIntervalSince1970) }

    /// Registers `app.one` and `app.two` with `schema` on `client`.
    /// - Throws: `SystemError` when the API refuses a step.
    package static func register(on client: any TestClient, schema: String = Seeds.behaviorAllAutomatic) async throws -> Credentials {
        Credentials(app: try await App.register(on: client, id: "app.one", schema: schema),
                    otherApp: try await App.register(on: client, id: "app.two", schema: schema),
                    admin: client.admin, issuedAt: now())
    }

    /// The bearer token `caller` sends; nil for `.anonymous`.
    package func token(_ caller: Caller) -> String? {
        let user = Self.user
        switch caller {
        case .anonymous: return nil
        case .garbage: return "not-a-token"
        case .forged: return app.token(for: user, issuedAt: issuedAt, signedWith: "forged-secret")
        case .tampered: return String(userToken.dropLast(3)) + (userToken.hasSuffix("AAA") ? "BBB" : "AAA")
        case .algNone:
            let header = Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8))
            let claims = Base64URL.encode(Array(#"{"sub":"\#(user)","aud":"\#(app.id)","exp":\#(issuedAt + 600)}"#.utf8))
            return "\(header).\(claims)."
        case .expired: return app.token(for: user, expiresIn: 480, issuedAt: issuedAt - 600)
        case .notYetValid: return app.token(for: user, expiresIn: 600, issuedAt: issuedAt + 300)
        case .otherUser: return otherUserToken
        case .otherApp: return otherAppToken
        case .user: return userToken
        case .operator: return admin
        }
    }

    /// `alice` of `app.one`, valid for an hour.
    package var userToken: String { app.token(for: Self.user, issuedAt: issuedAt) }
    /// `mallory` of `app.one`: the same app, another user.
    package var otherUserToken: String { app.token(for: Self.otherUser, issuedAt: issuedAt) }
    /// `alice` of `app.two`: the same user id, another app.
    package var otherAppToken: String { otherApp.token(for: Self.user, issuedAt: issuedAt) }
    /// What `/metrics` takes when it requires authentication (`--metrics-auth`, docs/operations.md): the operator's token.
    package var metricsToken: String { admin }

    /// `alice`'s customization in `app.one`.
    package var customization: String { app.userPath(Self.user) + "/customization" }

    /// `alice`'s layout in `app.one` for a size class.
    package func layout(_ sizeClass: String) -> String { app.userPath(Self.user) + "/layout?sizeClass=\(sizeClass)" }
}
