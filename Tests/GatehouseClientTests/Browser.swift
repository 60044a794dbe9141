import Foundation
import GatehouseClient

/// What the system browser does in a browser flow, done by hand: the upstream Gatehouse's sign-in
/// page (its form and hidden fields), the person's username and password, and every redirect up to
/// the app's return URI, which is where a browser hands back to the app.
struct Browser {
    let transport = URLSessionTransport()

    func signIn(at url: URL, username: String, password: String) async throws -> URL {
        var cookies: [String: String] = [:]
        func remember(_ response: HTTPResponse) {
            // `name=value; attributes`, possibly several joined with ", ".
            for cookie in (response.headers["set-cookie"] ?? "").components(separatedBy: ", ") {
                let pair = cookie.split(separator: ";").first.map(String.init) ?? ""
                if let equals = pair.firstIndex(of: "=") { cookies[String(pair[..<equals])] = String(pair[pair.index(after: equals)...]) }
            }
        }
        func headers() -> [String: String] {
            cookies.isEmpty ? [:] : ["Cookie": cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")]
        }
        let page = try await transport.send(HTTPRequest(method: "GET", url: url, headers: headers()))
        remember(page)
        let html = String(decoding: page.body, as: UTF8.self)
        guard page.status == 200, let action = Self.first(#"<form method="post" action="([^"]+)""#, in: html) else {
            throw GatehouseError.transport("the upstream's page has no form (\(page.status))")
        }
        var fields = Self.all(#"<input type="hidden" name="([^"]+)" value="([^"]*)""#, in: html)
        fields.append(("username", username))
        fields.append(("password", password))
        let body = fields.map { "\(Self.formEncode($0.0))=\(Self.formEncode(Self.unescape($0.1)))" }.joined(separator: "&")
        let target = URL(string: Self.unescape(action), relativeTo: url)!.absoluteURL
        var next = try await transport.send(
            HTTPRequest(
                method: "POST", url: target, headers: headers().merging(["Content-Type": "application/x-www-form-urlencoded"]) { a, _ in a }, body: Data(body.utf8))
        )
        // Redirects up to the app's own scheme, which a browser hands to the app.
        for _ in 0..<5 {
            remember(next)
            guard next.status == 303 || next.status == 302, let location = next.headers["location"], let url = URL(string: location) else {
                throw GatehouseError.transport("the sign-in answered \(next.status): \(String(decoding: next.body.prefix(300), as: UTF8.self))")
            }
            if url.scheme != "http" && url.scheme != "https" { return url }
            next = try await transport.send(HTTPRequest(method: "GET", url: url, headers: headers()))
        }
        throw GatehouseError.transport("too many redirects")
    }

    static func first(_ pattern: String, in text: String) -> String? {
        all(pattern, in: text).first?.0
    }

    static func all(_ pattern: String, in text: String) -> [(String, String)] {
        let expression = try! NSRegularExpression(pattern: pattern)
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { match in
            let group = { (index: Int) -> String in
                guard index < match.numberOfRanges, let range = Range(match.range(at: index), in: text) else { return "" }
                return String(text[range])
            }
            return (group(1), group(2))
        }
    }

    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&#x2F;", with: "/").replacingOccurrences(of: "&#x3D;", with: "=")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    static func formEncode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._*")) ?? text
    }
}
