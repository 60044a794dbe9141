import Foundation
import GatehousePluginKit
import GatehouseSupport

/// The routes of the activation plugin, declared as root endpoints so that their paths stay what apps
/// and invitation emails use: an app's back end issues activations (`POST /v1/activations`, where the
/// app's settings allow `issueByApp`); the JSON side of invitation links (`GET /v1/invitations/{token}`,
/// `POST .../accept`, `POST .../decline`); the invitation page (`/invitations/{token}`: accept with a
/// chosen activation PIN, or decline) and the broker's default activation link (`/activate`). The
/// token in the path is the credential, so those need no other; answering is a POST only (mail
/// scanners follow links).
extension ActivationProvider {
    public var endpoints: [PluginEndpoint] {
        [
            .forApps(
                .post, "v1/activations", summary: "Issues an activation (the app's back end; plugins.<instance>.issueByApp must allow it).",
                inputs: [
                    .text("account", label: "Account", maxLength: 256, required: false),
                    .text("email", label: "Email address", maxLength: 256, required: false),
                    .secret("pin", label: "Activation PIN", maxLength: 256, required: false),
                    .text("alias", label: "Device name", maxLength: 256, required: false),
                    .json("send", label: "Email the activation data (true or false)", maxLength: 8, required: false),
                ],
                root: true
            ) { call, app in
                PluginEndpointAnswer(try await issue(try ActivationRequest(fields: call.fields.values), app: app, issuedBy: "app").json, created: true)
            },
            .forAnyone(.get, "v1/invitations/:token", summary: "What an invitation link shows.") { call in
                PluginEndpointAnswer(Self.json(try await invitation(token: Self.token(call))))
            },
            .forAnyone(
                .post, "v1/invitations/:token/accept", summary: "Accepts an invitation with the activation PIN the person chooses.",
                inputs: [.secret("pin", label: "Activation PIN", maxLength: 64)]
            ) { call in
                guard let pin = call.fields.values["pin"]?.stringValue else {
                    throw BrokerError(.invalidRequest, .badRequest, "Choose an activation PIN ('pin') to accept the invitation.")
                }
                return PluginEndpointAnswer(Self.json(try await answerInvitation(token: Self.token(call), accept: true, pin: pin)))
            },
            .forAnyone(.post, "v1/invitations/:token/decline", summary: "Declines an invitation.") { call in
                PluginEndpointAnswer(Self.json(try await answerInvitation(token: Self.token(call), accept: false, pin: nil)))
            },
            .pageForAnyone(.get, "invitations/:token", summary: "The invitation page.") { call in
                invitationPage(try await invitation(token: Self.token(call)), token: Self.token(call), language: call.language)
            },
            .pageForAnyone(
                .post, "invitations/:token", summary: "Accepts or declines an invitation from its page.",
                inputs: [
                    .text("answer", label: "Answer", maxLength: 16, required: false),
                    .secret("pin", label: "Activation PIN", maxLength: 64, required: false),
                ]
            ) { call in
                try await answerFromPage(token: Self.token(call), fields: call.fields, language: call.language)
            },
            .pageForAnyone(
                .get, "activate", summary: "The broker's default activation link, opened in a browser instead of the app.",
                inputs: [.text("activation", label: "Activation data", maxLength: 512, required: false)]
            ) { call in
                let payload = call.fields.values["activation"]?.stringValue ?? ""
                return .page(
                    title: "Activate your device", template: "activate",
                    values: ["payload": .string(payload), "text": ActivationPages.texts(in: call.language)])
            },
        ]
    }

    public var pageTemplates: [String: String] { ActivationPages.templates }

    /// The invitation token in the call's path.
    static func token(_ call: PluginEndpointCall) -> String { call.parameters["token"] ?? "" }

    /// The invitation page's form: accept (with a PIN) or decline; a refusal the person can correct
    /// shows the form again with it.
    func answerFromPage(token: String, fields: ChallengeResponse, language: String = "en") async throws -> PluginEndpointAnswer {
        let view = try await invitation(token: token)
        guard let choice = fields.values["answer"]?.stringValue, ["accept", "decline"].contains(choice) else {
            return invitationPage(view, token: token, error: "Choose Accept or Decline.", status: 400, language: language)
        }
        do {
            let answer = try await answerInvitation(token: token, accept: choice == "accept", pin: fields.values["pin"]?.stringValue)
            return invitationPage(try await invitation(token: token), token: token, activation: answer.activation, language: language)
        } catch let error as BrokerError where error.kind == .badRequest {
            // A PIN rule's refusal is made with the policy's numbers: told from the rule, in the page's language.
            return invitationPage(view, token: token, error: view.pinPolicy.refusal(error, in: language) ?? error.message, status: 400, language: language)
        }
    }

    /// The invitation page in `language`; `error` is the English message (translated here when the
    /// plugin's translations have it).
    func invitationPage(
        _ view: InvitationView, token: String, activation: IssuedActivation? = nil, error: String? = nil, status: Int = 200, language: String = "en"
    ) -> PluginEndpointAnswer {
        let texts = ActivationPlugin.translations
        let state = texts.text(view.state, in: language)
        var values: [String: JSONValue] = [
            "text": ActivationPages.texts(in: language),
            "invited": .string(texts.text("You are invited to {app} ({email}).", in: language, ["app": view.appName, "email": view.email])),
            "pinLabel": .string(
                texts.text(
                    "Choose an activation PIN ({minLength} to {maxLength} digits)", in: language,
                    ["minLength": String(view.pinPolicy.minLength), "maxLength": String(view.pinPolicy.maxLength)])),
            "closedText": .string(texts.text("This invitation is {state}.", in: language, ["state": state])),
            "appName": .string(view.appName), "email": .string(view.email), "state": .string(view.state),
            "action": .string(environment.issuer + "/invitations/" + token),
            "minLength": .number(Double(view.pinPolicy.minLength)), "maxLength": .number(Double(view.pinPolicy.maxLength)),
            "pending": .bool(view.state == "pending"), "closed": .bool(view.state != "pending" && activation == nil),
            "error": error.map { .string(texts.text($0, in: language)) } ?? .bool(false),
        ]
        if let activation {
            let until = ISO8601DateFormatter().string(from: activation.expiresAt)
            values["activation"] = [
                "deepLink": .string(activation.deepLink), "expiresAt": .string(until),
                "worksUntil": .string(texts.text("It works until {until}.", in: language, ["until": until])),
            ]
        }
        return .page(title: "Invitation", template: "invitation", values: values, status: status)
    }

    static func json(_ view: InvitationView) -> JSONValue {
        [
            "app": .string(view.appID), "appName": .string(view.appName), "email": .string(view.email), "state": .string(view.state),
            "expiresAt": .string(ISO8601DateFormatter().string(from: view.expiresAt)),
            "pin": [
                "minLength": .number(Double(view.pinPolicy.minLength)), "maxLength": .number(Double(view.pinPolicy.maxLength)),
                "digitsOnly": .bool(view.pinPolicy.digitsOnly),
            ],
        ]
    }

    static func json(_ answer: InvitationAnswer) -> JSONValue {
        var fields: [String: JSONValue] = ["state": .string(answer.accepted ? "accepted" : "declined")]
        if let activation = answer.activation { fields["activation"] = activation.json }
        return .object(fields)
    }
}

/// The pages of the activation plugin, as Mustache templates (`{{x}}` escapes HTML). Plain HTML
/// forms: they work without JavaScript and with screen readers.
enum ActivationPages {
    static let templates = ["invitation": invitation, "activate": activate]

    /// The pages' fixed texts (`{{text.*}}`; the broker's own are `t`) in `language`: the templates hold no text of their own.
    static func texts(in language: String) -> JSONValue {
        .object(english.mapValues { .string(ActivationPlugin.translations.text($0, in: language)) })
    }

    static let english = [
        "accept": "Accept", "decline": "Decline", "activateHere": "Activate on this device",
        "openLink": "Open this link on the device you want to use, or scan it as a QR code there, and enter the PIN you chose:",
        "openInApp": "Open this link in the app on your device to activate it. If the app asks for activation data, enter these:",
    ]

    /// An invitation link: accept (choosing an activation PIN) or decline; after an answer, what it
    /// did and, when accepted, the activation data to open on the device.
    static let invitation = """
        <p>{{invited}}</p>
        {{#error}}<p class="error" role="alert" id="form-error">{{error}}</p>{{/error}}
        {{#pending}}
        <form method="post" action="{{action}}">
        <label for="field-pin">{{pinLabel}}</label>
        <input id="field-pin" name="pin" type="password" autocomplete="new-password" inputmode="numeric" maxlength="64"{{#error}} aria-describedby="form-error"{{/error}} autofocus>
        <button type="submit" name="answer" value="accept">{{text.accept}}</button>
        <button type="submit" name="answer" value="decline" class="secondary" formnovalidate>{{text.decline}}</button>
        </form>
        {{/pending}}
        {{#closed}}<p>{{closedText}}</p>{{/closed}}
        {{#activation}}
        <p>{{text.openLink}}</p>
        <p><a class="link-out" href="{{deepLink}}">{{text.activateHere}}</a></p>
        <p><code>{{deepLink}}</code></p>
        <p>{{worksUntil}}</p>
        {{/activation}}
        """

    /// The broker's own activation link, opened in a browser instead of the app.
    static let activate = """
        <p>{{text.openInApp}}</p>
        <p><code>{{payload}}</code></p>
        """
}
