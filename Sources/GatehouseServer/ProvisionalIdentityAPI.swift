import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// Provisional identities over HTTP. An app's back end manages them with its client credentials
/// (HTTP Basic): `POST /v1/provisional-identities`, `GET .../{id}`, `POST .../{id}/grants`. The
/// signed-in person attaches them with an access token: `POST /v1/account/provisional-identities`,
/// `POST .../{id}/verify`, and lists them with `GET`. Handlers only translate.
struct ProvisionalIdentityAPI {
    let service: ProvisionalIdentityService
    /// The broker's issuer: DPoP proofs name the request URL under it.
    let issuer: String

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.post("v1/provisional-identities") { request, context in
            let body = try await request.decode(as: CreateBody.self, context: context)
            let (identity, created) = try await service.create(
                email: body.email, grants: body.grants ?? [], groups: body.groups ?? [], by: .app(try Self.appCredentials(request), clientIP: context.clientIP)
            )
            return JSONBody(ProvisionalIdentity.View(identity)).response(status: created ? .created : .ok)
        }
        router.get("v1/provisional-identities/:id") { request, context in
            let identity = try await service.identity(id: try context.parameters.require("id"), by: .app(try Self.appCredentials(request), clientIP: context.clientIP))
            return JSONBody(ProvisionalIdentity.View(identity)).response(status: .ok)
        }
        router.post("v1/provisional-identities/:id/grants") { request, context in
            let body = try await request.decode(as: GrantBody.self, context: context)
            let identity = try await service.grant(
                id: try context.parameters.require("id"), grants: body.grants ?? [], groups: body.groups ?? [],
                by: .app(try Self.appCredentials(request), clientIP: context.clientIP)
            )
            return JSONBody(ProvisionalIdentity.View(identity)).response(status: .ok)
        }

        router.get("v1/account/provisional-identities") { request, _ in
            try await AccessTokenAuthentication.with(request, issuer: issuer) { token in
                JSONBody(try await service.attached(accessToken: token).map(ProvisionalIdentity.View.init)).response(status: .ok)
            }
        }
        router.post("v1/account/provisional-identities") { request, context in
            let body = try await request.decode(as: AttachBody.self, context: context)
            return try await AccessTokenAuthentication.with(request, issuer: issuer) { token in
                switch try await service.attach(id: body.id, accessToken: token, clientIP: context.clientIP) {
                case .ready(let identity):
                    return JSONBody(AttachAnswer(status: "ready", provisionalIdentity: ProvisionalIdentity.View(identity))).response(status: .ok)
                case .verificationNeeded(let email, let delivery):
                    return JSONBody(
                        AttachAnswer(status: "identity_verification_needed", email: email.value, codeExpiresAt: delivery.expiresAt, resendAfter: delivery.resendAfter)
                    ).response(status: .accepted)
                }
            }
        }
        router.post("v1/account/provisional-identities/:id/verify") { request, context in
            let body = try await request.decode(as: VerifyBody.self, context: context)
            let id = try context.parameters.require("id")
            return try await AccessTokenAuthentication.with(request, issuer: issuer) { token in
                let identity = try await service.verify(id: id, code: body.code, accessToken: token, clientIP: context.clientIP)
                return JSONBody(AttachAnswer(status: "ready", provisionalIdentity: ProvisionalIdentity.View(identity))).response(status: .ok)
            }
        }
    }

    struct AttachAnswer: Encodable {
        var status: String
        var provisionalIdentity: ProvisionalIdentity.View?
        var email: String?
        var codeExpiresAt: Date?
        var resendAfter: Date?
    }

    struct CreateBody: Decodable {
        var email: String
        var grants: [String]?
        var groups: [String]?
    }

    struct GrantBody: Decodable {
        var grants: [String]?
        var groups: [String]?
    }

    struct AttachBody: Decodable { var id: String }
    struct VerifyBody: Decodable { var code: String }

    /// An app's back end authenticates with HTTP Basic (its client id and secret).
    static func appCredentials(_ request: Request) throws -> ClientCredentials {
        guard let basic = try ClientAuthentication.basicCredentials(request.headers[.authorization]) else {
            throw BrokerError(.invalidClient, .unauthenticated, "The app's client credentials are required (HTTP Basic).")
        }
        return basic
    }
}
