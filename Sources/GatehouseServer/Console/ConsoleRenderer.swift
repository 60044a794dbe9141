import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
import Mustache

/// Renders the console's pages in the console layout (navigation, the signed-in admin, the sign-out
/// form), with the sign-in pages' headers: no caching, no framing, and a Content-Security-Policy
/// that allows no script at all and forms only to this origin.
struct ConsoleRenderer: Sendable {
    let library: MustacheLibrary
    /// The admin console, or the account page (same layout, no navigation).
    let site: ConsoleSite

    static let navigation: [(href: String, label: String)] = [
        ("/admin/apps", "Apps"), ("/admin/providers", "Providers"), ("/admin/users", "Users"), ("/admin/lockouts", "Lockouts"),
        ("/admin/keys", "Signing keys"), ("/admin/audit", "Audit log"),
    ]

    init(site: ConsoleSite = .admin) {
        self.site = site
        var library = MustacheLibrary()
        for (name, text) in [
            ("layout", ConsoleTemplates.layout), ("field", ConsoleTemplates.field), ("signIn", ConsoleTemplates.signIn), ("notAdmin", ConsoleTemplates.notAdmin),
            ("home", ConsoleTemplates.home), ("apps", ConsoleTemplates.apps), ("form", ConsoleTemplates.form), ("secretShown", ConsoleTemplates.secretShown),
            ("app", ConsoleTemplates.app), ("appSettings", ConsoleTemplates.appSettings), ("policyForm", ConsoleTemplates.policyForm),
            ("resource", ConsoleTemplates.resource), ("confirm", ConsoleTemplates.confirm), ("providers", ConsoleTemplates.providers),
            ("provider", ConsoleTemplates.provider), ("users", ConsoleTemplates.users), ("pager", ConsoleTemplates.pager), ("user", ConsoleTemplates.user),
            ("lockoutTable", ConsoleTemplates.lockoutTable), ("keys", ConsoleTemplates.keys), ("audit", ConsoleTemplates.audit),
            ("message", ConsoleTemplates.message), ("account", AccountTemplates.account), ("enrol", AccountTemplates.enrol),
        ] {
            // The templates are constants of this module; a parse error is a programming error.
            try! library.register(text, named: name)
        }
        self.library = library
    }

    /// A page. `session` (an admitted admin) shows the navigation; `current` marks its entry.
    func page(
        _ template: String, title: String, values: [String: Any], session: ConsoleSession?, current: String? = nil, notice: String? = nil,
        error: BrokerError? = nil, fieldNames: Set<String> = [], status: HTTPResponse.Status = .ok, language: String = "en"
    ) -> Response {
        // The admin console is English; the account page speaks the person's language.
        let language = site == .admin ? "en" : language
        let texts = AccountTexts.values(language: language)
        var values = values
        values["t"] = texts
        if let session { values["csrf"] = session.csrfToken }
        let content = library.render(values, withTemplate: template) ?? ""
        var layout: [String: Any] = [
            "title": title, "content": content, "notice": notice ?? false, "signedIn": false, "summary": false, "t": texts,
            "brandLabel": site == .admin ? "Gatehouse admin" : AccountTexts.text(of: "Your account", in: language), "home": site.path + (site == .admin ? "/" : ""),
            "signOutAction": site.path + "/logout", "hasNav": site == .admin,
        ]
        if let session, session.isAdmitted {
            layout["signedIn"] = true
            layout["username"] = session.username
            layout["csrf"] = session.csrfToken
            layout["nav"] = Self.navigation.map { ["href": $0.href, "label": $0.label, "current": $0.href == current] as [String: Any] }
        }
        if var error {
            error = Self.readable(error)
            layout["summary"] =
                [
                    "message": error.message, "code": error.code.rawValue,
                    "issues": error.issues.map { issue -> [String: Any] in
                        let field = Self.field(for: issue.path, in: fieldNames)
                        return ["text": issue.description, "anchor": field.map(ConsoleField.elementID) ?? false]
                    },
                ] as [String: Any]
        }
        let html = library.render(layout, withTemplate: "layout") ?? ""
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        headers[.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    /// A page saying what went wrong, with the error's message and code, and where to go next.
    /// A refusal's page; `language` (the account page's) translates its title and default link, and
    /// the caller its message.
    func failure(_ error: BrokerError, session: ConsoleSession?, links: [[String: Any]] = [], language: String = "en") -> Response {
        var links = links
        if links.isEmpty {
            links = [
                [
                    "href": site.path + (site == .admin ? "/" : ""),
                    "label": site == .admin ? "Back to the console" : AccountTexts.text(of: "Back to your account", in: language), "secondary": true, "id": false,
                ]
            ]
        }
        return page(
            "message", title: AccountTexts.text(of: Self.title(of: error), in: site == .admin ? "en" : language),
            values: ["message": "\(error.message) (\(error.code.rawValue))", "links": links], session: session, status: HTTPResponse.Status(code: error.httpStatus),
            language: language
        )
    }

    static func title(of error: BrokerError) -> String {
        switch error.code {
        case .invalidCSRFToken: "The form was refused"
        case .reauthenticationRequired: "Sign in again to continue"
        case .adminRoleRequired: "No admin role"
        case .notFound: "Not found"
        default: "That did not work"
        }
    }

    /// The field name an issue's path points at: the path itself, or its nearest parent that is a
    /// field (`redirectURIs[1]` → `redirectURIs`, `policy.identityProviders[0]` → that group).
    static func field(for path: String, in names: Set<String>) -> String? {
        var candidate = path
        while !candidate.isEmpty {
            if names.contains(candidate) { return candidate }
            if candidate.hasSuffix("]"), let open = candidate.lastIndex(of: "[") {
                candidate = String(candidate[..<open])
            } else if let dot = candidate.lastIndex(of: ".") {
                candidate = String(candidate[..<dot])
            } else {
                return nil
            }
        }
        return nil
    }

    /// The error as a form shows it: without keys the decoder left unread after a wrong value.
    static func readable(_ error: BrokerError) -> BrokerError {
        var error = error
        let issues = ConfigIssue.withoutKeysLeftUnread(error.issues)
        if issues.count != error.issues.count {
            error.issues = issues
            error.message = issues.map(\.description).joined(separator: "; ")
        }
        return error
    }

    /// Each issue's message by the field it belongs to (the first per field).
    static func fieldErrors(_ error: BrokerError, names: Set<String>) -> [String: String] {
        var errors: [String: String] = [:]
        for issue in readable(error).issues {
            guard let field = field(for: issue.path, in: names), errors[field] == nil else { continue }
            errors[field] = issue.message
        }
        return errors
    }

    static func time(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date).replacingOccurrences(of: "T", with: " ")
    }

    static func redirect(_ location: String) -> Response {
        var headers = HTTPFields()
        headers[.location] = location
        headers[.cacheControl] = "no-store"
        return Response(status: .seeOther, headers: headers)
    }
}
