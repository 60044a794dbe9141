import Foundation
import GatehouseCore
import Hummingbird

/// `/admin/v1`: apps and policies, providers, users, audit. Bearer admin credentials (named tokens
/// from the config's `admin.tokens` or `GATEHOUSE_ADMIN_TOKEN`); with none configured the whole API
/// answers `404 admin_api_disabled`. Handlers only translate to `AdminService` calls.
struct AdminAPI {
    let broker: Broker
    var admin: AdminService { broker.admin }

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        let group = router.group("admin/v1").add(middleware: AdminAuthentication(gate: broker.adminGate))
            .add(middleware: BodyLimitMiddleware(bytes: BodyLimit.json))
        group.get("apps") { _, _ in JSONBody(try await admin.apps()).response(status: .ok) }
        group.post("apps") { request, context in
            let (app, secret) = try await admin.createApp(try await body(request, context), by: try identity(context))
            return JSONBody(CreatedApp(app: app, clientSecret: secret)).response(status: .created)
        }
        group.get("apps/:id") { _, context in JSONBody(try await admin.app(id: try context.parameters.require("id"))).response(status: .ok) }
        group.patch("apps/:id") { request, context in
            let app = try await admin.updateApp(id: try context.parameters.require("id"), changes: try await body(request, context), by: try identity(context))
            return JSONBody(app).response(status: .ok)
        }
        group.delete("apps/:id") { _, context in
            try await admin.deleteApp(id: try context.parameters.require("id"), by: try identity(context))
            return Response(status: .noContent)
        }
        group.patch("apps/:id/policy") { request, context in
            let app = try await admin.patchPolicy(id: try context.parameters.require("id"), patch: try await body(request, context), by: try identity(context))
            return JSONBody(app).response(status: .ok)
        }
        group.post("apps/:id/secret") { _, context in
            let secret = try await admin.rotateSecret(id: try context.parameters.require("id"), by: try identity(context))
            return JSONBody(["client_secret": secret]).response(status: .ok)
        }
        group.post("apps/:id/webhook/secret") { request, context in
            // An optional body: {"overlap": "0s"} stops the previous secret at once (it leaked).
            let buffer = try await request.body.collect(upTo: context.maxUploadSize)
            let overlap: Seconds?
            if buffer.readableBytes == 0 {
                overlap = nil
            } else {
                struct Rotation: Decodable { var overlap: Seconds? }
                do { overlap = try JSONDecoder().decode(Rotation.self, from: Data(buffer: buffer)).overlap } catch {
                    throw BrokerError(.invalidRequest, .badRequest, "The body is {\"overlap\": <seconds or a duration such as \"0s\" or \"24h\">}, or empty.")
                }
            }
            let secret = try await admin.rotateWebhookSecret(id: try context.parameters.require("id"), overlap: overlap, by: try identity(context))
            return JSONBody(["secret": secret]).response(status: .ok)
        }
        group.get("apps/:id/webhook/dead-letters") { request, context in
            let limit = request.uri.queryParameters.get("limit", as: Int.self) ?? 100
            return JSONBody(try await admin.deadLetters(id: try context.parameters.require("id"), limit: limit)).response(status: .ok)
        }
        group.post("apps/:id/webhook/dead-letters/:delivery/replay") { _, context in
            guard let delivery = Int64(try context.parameters.require("delivery")) else { throw BrokerError(.notFound, .notFound, "No such delivery.") }
            try await admin.replay(id: try context.parameters.require("id"), delivery: delivery, by: try identity(context))
            return Response(status: .noContent)
        }
        group.post("apps/:id/webhook/dead-letters/replay") { _, context in
            JSONBody(["replayed": try await admin.replayAll(id: try context.parameters.require("id"), by: try identity(context))]).response(status: .ok)
        }
        group.post("apps/:id/return-to-config") { _, context in
            JSONBody(try await admin.returnToConfig(id: try context.parameters.require("id"), by: try identity(context))).response(status: .ok)
        }
        group.get("providers") { _, _ in JSONBody(await admin.providers()).response(status: .ok) }
        group.get("providers/:id/directory") { request, context in
            // Form decoding: clients send a space in `q` as `+` as often as `%20`.
            let query = try FormBody.query(request)
            guard let limit = query["limit"].map({ Int($0) }) ?? 20 else { throw BrokerError.invalidRequest("limit must be a whole number.") }
            let result = try await admin.searchDirectory(
                providerID: try context.parameters.require("id"), text: query["q"] ?? "", limit: limit, by: try identity(context))
            return JSONBody(result).response(status: .ok)
        }
        group.get("readiness") { _, _ in
            let readiness = await broker.readiness()
            return JSONBody(readiness).response(status: readiness.ready ? .ok : .serviceUnavailable)
        }
        group.get("users") { request, _ in
            let limit = request.uri.queryParameters.get("limit", as: Int.self) ?? 100
            let offset = request.uri.queryParameters.get("offset", as: Int.self) ?? 0
            if let search = request.uri.queryParameters.get("q"), !search.isEmpty {
                return JSONBody(try await admin.users(matching: search, limit: limit, offset: offset)).response(status: .ok)
            }
            return JSONBody(try await admin.users(limit: limit, offset: offset)).response(status: .ok)
        }
        group.post("users") { request, context in
            let (user, password) = try await admin.createPasswordUser(try await body(request, context), by: try identity(context))
            return JSONBody(PasswordUserAnswer(user: user, password: password)).response(status: .created)
        }
        group.post("users/:id/password") { request, context in
            let password = try await admin.resetPassword(accountID: try context.parameters.require("id"), try await body(request, context), by: try identity(context))
            return JSONBody(PasswordUserAnswer(user: nil, password: password)).response(status: .ok)
        }
        group.get("admins") { _, _ in JSONBody(try await admin.admins()).response(status: .ok) }
        group.put("users/:id/roles/admin") { _, context in
            let granted = try await admin.grantAdmin(accountID: try context.parameters.require("id"), by: try identity(context))
            return Response(status: granted ? .created : .noContent)
        }
        group.delete("users/:id/roles/admin") { _, context in
            guard try await admin.revokeAdmin(accountID: try context.parameters.require("id"), by: try identity(context)) else {
                throw BrokerError(.notFound, .notFound, "The account has no admin role.")
            }
            return Response(status: .noContent)
        }
        group.get("keys") { _, _ in JSONBody(try await admin.signingKeys()).response(status: .ok) }
        group.post("keys/rotate") { request, context in
            let immediately = request.uri.queryParameters.get("immediately") == "true"
            let keys = try await admin.rotateSigningKeys(immediately: immediately, by: try identity(context), via: "api")
            return JSONBody(JSONValue.array(keys.map { .object(["kid": .string($0.kid), "alg": .string($0.algorithm.rawValue)]) })).response(status: .created)
        }
        group.post("keys/:kid/revoke") { _, context in
            let replacements = try await admin.revokeSigningKey(kid: try context.parameters.require("kid"), by: try identity(context), via: "api")
            return JSONBody(
                JSONValue.object([
                    "revoked": .string(try context.parameters.require("kid")),
                    "replacements": .array(replacements.map { .object(["kid": .string($0.kid), "alg": .string($0.algorithm.rawValue)]) }),
                ])
            )
            .response(status: .ok)
        }
        group.get("users/:id") { _, context in JSONBody(try await admin.user(id: try context.parameters.require("id"))).response(status: .ok) }
        group.delete("users/:id") { _, context in
            try await admin.deregisterUser(id: try context.parameters.require("id"), by: try identity(context))
            return Response(status: .noContent)
        }
        group.post("users/:id/disable") { request, context in
            let reason = try await optionalReason(request, context)
            return JSONBody(try await admin.disableUser(id: try context.parameters.require("id"), reason: reason, by: try identity(context))).response(status: .ok)
        }
        group.post("users/:id/enable") { request, context in
            let reason = try await optionalReason(request, context)
            return JSONBody(try await admin.enableUser(id: try context.parameters.require("id"), reason: reason, by: try identity(context))).response(status: .ok)
        }
        group.get("scim-clients") { _, _ in
            let clients = try await broker.store.scimClients().map { client -> JSONValue in
                [
                    "id": .string(client.id), "name": .string(client.name), "createdAt": .string(client.createdAt.formatted(.iso8601)),
                    "createdBy": .string(client.createdBy),
                ]
            }
            return JSONBody(JSONValue.array(clients)).response(status: .ok)
        }
        group.post("scim-clients") { request, context in
            struct Creation: Decodable {
                var id: String
                var name: String?
            }
            let creation: Creation
            do { creation = try await request.decode(as: Creation.self, context: context) } catch {
                throw BrokerError(.invalidRequest, .badRequest, "The body is {\"id\": \"<client id>\", \"name\": \"<a name>\"}.")
            }
            let admin = try identity(context)
            let (client, token) = try await broker.scim.createClient(
                id: creation.id, name: creation.name, createdBy: "admin:\(admin.name)", auditDetails: admin.auditDetails)
            return JSONBody(JSONValue.object(["id": .string(client.id), "name": .string(client.name), "token": .string(token)])).response(status: .created)
        }
        group.post("scim-clients/:id/token") { _, context in
            let id = try context.parameters.require("id")
            let token = try await broker.scim.rotateClientToken(id: id, auditDetails: try identity(context).auditDetails)
            return JSONBody(JSONValue.object(["id": .string(id), "token": .string(token)])).response(status: .ok)
        }
        group.delete("scim-clients/:id") { _, context in
            try await broker.scim.deleteClient(id: try context.parameters.require("id"), auditDetails: try identity(context).auditDetails)
            return Response(status: .noContent)
        }
        group.get("users/:id/devices") { _, context in
            JSONBody(JSONValue.array(try await broker.devices.devices(accountID: try context.parameters.require("id")).map(\.json))).response(status: .ok)
        }
        group.delete("users/:id/devices/:device") { _, context in
            try await broker.devices.remove(
                try context.parameters.require("device"), accountID: try context.parameters.require("id"), by: try identity(context)
            )
            return Response(status: .noContent)
        }
        group.get("users/:id/sessions") { _, context in
            JSONBody(JSONValue.array(try await admin.sessions(accountID: try context.parameters.require("id")).map(\.json))).response(status: .ok)
        }
        group.delete("users/:id/sessions") { _, context in
            let ended = try await admin.endSessions(accountID: try context.parameters.require("id"), sessionID: nil, by: try identity(context))
            return JSONBody(JSONValue.object(["ended": .number(Double(ended))])).response(status: .ok)
        }
        group.delete("users/:id/sessions/:session") { _, context in
            _ = try await admin.endSessions(
                accountID: try context.parameters.require("id"), sessionID: try context.parameters.require("session"), by: try identity(context)
            )
            return Response(status: .noContent)
        }
        addResourceRoutes(to: group, owner: "providers") { .provider($0) }
        addResourceRoutes(to: group, owner: "apps") { .app($0) }
        group.post("apps/:id/provisional-identities") { request, context in
            let body = try await request.decode(as: ProvisionalIdentityAPI.CreateBody.self, context: context)
            let (provisional, created) = try await broker.provisionalIdentities.create(
                email: body.email, grants: body.grants ?? [], groups: body.groups ?? [], by: .admin(try identity(context), appID: try context.parameters.require("id"))
            )
            return JSONBody(ProvisionalIdentity.View(provisional)).response(status: created ? .created : .ok)
        }
        group.get("apps/:id/provisional-identities/:identity") { _, context in
            let provisional = try await broker.provisionalIdentities.identity(
                id: try context.parameters.require("identity"), by: .admin(try identity(context), appID: try context.parameters.require("id"))
            )
            return JSONBody(ProvisionalIdentity.View(provisional)).response(status: .ok)
        }
        group.get("lockouts") { _, _ in JSONBody(try await admin.lockouts()).response(status: .ok) }
        group.post("lockouts/unlock") { request, context in
            guard case .object(let body) = try await body(request, context), let key = body["key"]?.stringValue else {
                throw BrokerError(.invalidRequest, .badRequest, "The body must be {\"key\": \"...\"}.", issues: [ConfigIssue(path: "key", "required key is missing")])
            }
            try await admin.unlock(key: key, by: try identity(context))
            return Response(status: .noContent)
        }
        group.get("audit") { request, _ in
            let query = request.uri.queryParameters
            func time(_ name: String) throws -> Date? {
                guard let text = query.get(name) else { return nil }
                guard let parsed = try? Date(String(text), strategy: .iso8601) else {
                    throw BrokerError(
                        .invalidRequest, .badRequest, "\(name) must be an RFC 3339 time, e.g. 2026-11-22T10:00:00Z.",
                        issues: [ConfigIssue(path: name, "not an RFC 3339 time")])
                }
                return parsed
            }
            let events = try await admin.audit(
                AuditQuery(
                    type: query.get("type"), appID: query.get("app"), accountID: query.get("user"), admin: query.get("admin"), since: try time("since"),
                    until: try time("until"), limit: query.get("limit", as: Int.self) ?? 100, offset: query.get("offset", as: Int.self) ?? 0
                )
            )
            return JSONBody(events.map(AuditEntry.init)).response(status: .ok)
        }
    }

    /// A new user, or a reset: the password when the broker generated it (shown once).
    struct PasswordUserAnswer: Encodable {
        var user: AdminService.UserView?
        var password: String?
    }

    struct CreatedApp: Encodable {
        var app: AdminService.AppView
        /// Shown once; only its digest is stored.
        var clientSecret: String?

        enum CodingKeys: String, CodingKey {
            case app
            case clientSecret = "client_secret"
        }
    }

    /// The resources plugins offer (`GatehousePlugin.adminResources`): `GET` lists, `POST` adds (201 with the
    /// new item), `DELETE .../{key...}` removes (204). Fixed routes such as `apps/{id}/policy` win
    /// over these, as Hummingbird matches constant path components first.
    private func addResourceRoutes(
        to group: RouterGroup<GatehouseRequestContext>, owner path: String, owner: @escaping @Sendable (String) -> AdminService.ResourceOwner
    ) {
        group.get("\(path)/:id/:resource") { _, context in
            let listed = try await admin.resourceItems(try context.parameters.require("resource"), of: owner(try context.parameters.require("id")))
            return JSONBody(listed.items).response(status: .ok)
        }
        group.post("\(path)/:id/:resource") { request, context in
            // A resource made from nothing (a generated key) may be asked for with an empty body.
            let buffer = try await request.body.collect(upTo: context.maxUploadSize)
            let fields: [String: JSONValue]
            if buffer.readableBytes == 0 {
                fields = [:]
            } else if case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: buffer)) {
                fields = object
            } else {
                throw BrokerError(.invalidRequest, .badRequest, "The body must be a JSON object.")
            }
            let change = try await admin.createResourceItem(
                try context.parameters.require("resource"), of: owner(try context.parameters.require("id")), fields: fields, by: try identity(context)
            )
            return JSONBody(change.item).response(status: .created)
        }
        group.delete("\(path)/:id/:resource/**") { _, context in
            let key = context.parameters.getCatchAll().map { String($0).removingPercentEncoding ?? String($0) }
            _ = try await admin.deleteResourceItem(
                try context.parameters.require("resource"), of: owner(try context.parameters.require("id")), key: key, by: try identity(context)
            )
            return Response(status: .noContent)
        }
    }

    private func body(_ request: Request, _ context: GatehouseRequestContext) async throws -> JSONValue {
        try await request.decode(as: JSONValue.self, context: context)
    }

    /// `{"reason": "..."}` or an empty body: why an account is disabled or enabled, for the audit log.
    private func optionalReason(_ request: Request, _ context: GatehouseRequestContext) async throws -> String? {
        let buffer = try await request.body.collect(upTo: context.maxUploadSize)
        guard buffer.readableBytes > 0 else { return nil }
        struct Body: Decodable { var reason: String? }
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(buffer: buffer)) else {
            throw BrokerError(.invalidRequest, .badRequest, "The body is {\"reason\": \"<why, for the audit log>\"}, or empty.")
        }
        guard (body.reason?.count ?? 0) <= 500 else { throw BrokerError(.invalidRequest, .badRequest, "The reason is longer than 500 characters.") }
        return body.reason
    }

    private func identity(_ context: GatehouseRequestContext) throws -> AdminIdentity {
        guard let admin = context.admin else { throw BrokerError(.invalidToken, .unauthenticated, "Admin credentials are required.") }
        return admin
    }
}

/// Checks the admin bearer token before any admin route runs.
struct AdminAuthentication: RouterMiddleware {
    let gate: AdminGate

    func handle(_ request: Request, context: GatehouseRequestContext, next: (Request, GatehouseRequestContext) async throws -> Response) async throws -> Response {
        let header = request.headers[.authorization]
        let token = header.flatMap { $0.lowercased().hasPrefix("bearer ") ? String($0.dropFirst(7)).trimmingCharacters(in: .whitespaces) : nil }
        let admin: AdminIdentity
        do {
            admin = try await gate.authenticate(bearer: token, clientIP: context.clientIP)
        } catch let error as BrokerError where error.code == .invalidToken {
            var response = ErrorBody(error).response()
            response.headers[.wwwAuthenticate] = #"Bearer realm="gatehouse-admin""#
            return response
        }
        var context = context
        context.admin = admin
        context.logger[metadataKey: "admin"] = .string(admin.name)
        return try await next(request, context)
    }
}
