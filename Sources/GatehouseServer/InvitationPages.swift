import Foundation
import GatehouseCore
import Hummingbird

/// The pages behind invitation emails (`/invitations/{token}`: accept with a chosen activation PIN,
/// or decline) and the broker's default activation link (`/activate`). The token in the path is the
/// credential, so a form needs no other; answering is a POST only (mail scanners follow links).
struct InvitationPages {
    let broker: Broker
    let renderer: PageRenderer

    init(broker: Broker) {
        self.broker = broker
        self.renderer = PageRenderer(issuer: broker.config.server.issuer, challenges: broker.engine.challenges)
    }

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.get("invitations/:token") { _, context in
            let token = try context.parameters.require("token")
            do {
                return page(try await broker.activations.invitation(token: token), token: token)
            } catch let error as BrokerError {
                return renderer.error(error, requestID: context.id)
            }
        }
        router.post("invitations/:token") { request, context in
            let token = try context.parameters.require("token")
            do {
                let form = try await FormBody.parse(request, context: context)
                let view = try await broker.activations.invitation(token: token)
                guard let choice = form["answer"], ["accept", "decline"].contains(choice) else {
                    return page(view, token: token, error: "Choose Accept or Decline.", status: .badRequest)
                }
                do {
                    let answer = try await broker.activations.answerInvitation(token: token, accept: choice == "accept", pin: form["pin"])
                    return page(try await broker.activations.invitation(token: token), token: token, activation: answer.activation)
                } catch let error as BrokerError where error.kind == .badRequest {
                    return page(view, token: token, error: error.message, status: .badRequest)
                }
            } catch let error as BrokerError {
                return renderer.error(error, requestID: context.id)
            }
        }
        router.get("activate") { request, _ in
            let payload = request.uri.queryParameters["activation"].map(String.init) ?? ""
            return renderer.page("activate", title: "Activate your device", values: ["payload": payload])
        }
    }

    func page(_ view: InvitationView, token: String, activation: IssuedActivation? = nil, error: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        var values: [String: Any] = [
            "appName": view.appName, "email": view.email, "state": view.state, "action": broker.config.server.issuer + "/invitations/" + token,
            "minLength": view.pinPolicy.minLength, "maxLength": view.pinPolicy.maxLength,
            "pending": view.state == "pending", "closed": view.state != "pending" && activation == nil, "error": error ?? false,
        ]
        if let activation {
            values["activation"] = ["deepLink": activation.deepLink, "expiresAt": ISO8601DateFormatter().string(from: activation.expiresAt)]
        }
        return renderer.page("invitation", title: "Invitation", values: values, status: status)
    }
}
