import GatehouseCore
import HTTPTypes
import Hummingbird
import Mustache

/// Renders the browser pages and gives them the headers every page carries: no caching, a strict
/// Content-Security-Policy (no scripts at all), no framing.
struct PageRenderer: Sendable {
    let library: MustacheLibrary
    let issuer: String

    init(issuer: String) {
        var library = MustacheLibrary()
        for (name, text) in [
            ("layout", PageTemplates.layout), ("credentials", PageTemplates.credentials), ("challenge", PageTemplates.challenge),
            ("chooser", PageTemplates.chooser), ("error", PageTemplates.error),
        ] {
            // The templates are constants of this file's module; a parse error is a programming error.
            try! library.register(text, named: name)
        }
        self.library = library
        self.issuer = issuer
    }

    func page(_ template: String, title: String, values: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        let content = library.render(values, withTemplate: template) ?? ""
        let html = library.render(["title": title, "content": content], withTemplate: "layout") ?? ""
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        headers[.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    func error(_ error: BrokerError, requestID: String?) -> Response {
        page(
            "error", title: "Sign-in is not possible",
            values: ["description": error.message, "code": error.code.rawValue, "requestID": requestID ?? false],
            status: HTTPResponse.Status(code: error.httpStatus)
        )
    }

    /// The page for a challenge, a provider choice, or the redirect back to the app.
    func render(_ outcome: FlowOutcome, app: App?, csrf: String, error: String? = nil, status: HTTPResponse.Status = .ok, requestID: String?) -> Response {
        let appName: Any = app?.name ?? false
        switch outcome {
        case .authorized(_, let redirect):
            return Self.redirect(to: redirect)
        case .chooseProvider(let flowID, let providers, _):
            return page(
                "chooser", title: "Sign in",
                values: [
                    "appName": appName, "flow": flowID, "csrf": csrf, "action": issuer + "/oauth2/authorize/provider",
                    "providers": providers.map { ["id": $0, "label": "Continue with \($0)"] },
                ], status: status
            )
        case .challenge(let flowID, let challenge, _):
            var values: [String: Any] = [
                "appName": appName, "flow": flowID, "csrf": csrf, "action": issuer + "/oauth2/authorize/answer", "error": error ?? false,
            ]
            if challenge.type == "credentials" {
                let hint = challenge.fields["username"]?.stringValue ?? ""
                values["username"] = hint
                // Mustache treats an empty string as true, so the autofocus choice needs a real Boolean.
                values["prefilled"] = !hint.isEmpty
                return page("credentials", title: "Sign in", values: values, status: status)
            }
            var names: [String] = []
            if case .array(let items)? = challenge.fields["fields"] { names = items.compactMap(\.stringValue) }
            values["prompt"] = challenge.fields["prompt"]?.stringValue ?? Self.prompt(for: challenge) ?? false
            values["resend"] = challenge.type == "email_code"
            values["fields"] = names.enumerated().map { (index: Int, name: String) -> [String: Any] in
                let secret = name.contains("password") || name.contains("pin")
                let label = name == "email" ? "Email address" : name.replacingOccurrences(of: "_", with: " ").capitalized
                let autocomplete = name == "code" ? "one-time-code" : name == "email" ? "email" : secret ? "current-password" : "off"
                let type = secret ? "password" : name == "email" ? "email" : "text"
                let mode: Any = name == "code" ? "numeric" : false
                return ["name": name, "label": label, "type": type, "autocomplete": autocomplete, "first": index == 0, "inputmode": mode]
            }
            return page("challenge", title: "Sign in", values: values, status: status)
        case .completed:
            return self.error(BrokerError.internalFailure("This flow cannot finish in a browser."), requestID: requestID)
        }
    }

    /// What the page says above the form, for challenge types that carry no `prompt` of their own.
    static func prompt(for challenge: Challenge) -> String? {
        switch challenge.type {
        case "email_address":
            challenge.fields["enrol"] == .bool(true)
                ? "This account needs an email address for its sign-in codes. We will send a code to prove it is yours."
                : "We will email you a code to sign in with."
        case "email_code":
            "Enter the code we sent to \(challenge.fields["sentTo"]?.stringValue ?? "your email address")."
        case Challenge.retryType:
            "The next step could not start (\(challenge.fields["error"]?.stringValue ?? "error")). Try again."
        default:
            nil
        }
    }

    static func redirect(to location: String) -> Response {
        var headers = HTTPFields()
        headers[.location] = location
        headers[.cacheControl] = "no-store"
        return Response(status: .seeOther, headers: headers)
    }
}

extension HTTPField.Name {
    static var contentSecurityPolicy: Self { .init("Content-Security-Policy")! }
}
