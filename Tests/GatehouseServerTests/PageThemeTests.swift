import Foundation
import GatehouseCore
@testable import GatehouseServer
import Hummingbird
import HummingbirdTesting
import Testing

/// An operator's theme (`server.themeDir`) replaces page templates and adds a stylesheet; every
/// mistake in the folder is named at start, and the strict Content-Security-Policy stays.
extension GatehouseServerTests {
    func themeFolder(_ files: [String: String]) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-theme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(name)) }
        return folder
    }

    @Test func aThemeReplacesPagesAndAddsItsStylesheetUnderTheSameCSP() async throws {
        let folder = try themeFolder([
            "error.mustache": "<p class=\"acme-error\">{{description}} ({{code}})</p>", "pages.css": "body{background:#102030}", "README.md": "notes",
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        let theme = try PageTheme.load(directory: folder.path)
        #expect(theme.templates.keys.sorted() == ["error"] && theme.stylesheet == "body{background:#102030}")
        let renderer = PageRenderer(issuer: "https://id.example", challenges: ChallengeCatalog(), theme: theme)
        let router = Router(context: GatehouseRequestContext.self)
        router.get("error") { _, _ in renderer.error(BrokerError(.invalidRequest, .badRequest, "Nope <b>."), requestID: nil) }
        try await Application(router: router).test(.router) { client in
            let page = try await client.execute(uri: "/error", method: .get)
            let text = String(buffer: page.body)
            #expect(text.contains("<p class=\"acme-error\">Nope &lt;b&gt;. (invalid_request)</p>"))
            #expect(text.contains("<style>body{background:#102030}</style>"))
            #expect(
                page.headers.first { $0.name.canonicalName == "content-security-policy" }?.value.hasPrefix("default-src 'none'; style-src 'unsafe-inline'; img-src data:")
                    == true)
        }
    }

    @Test func aThemesMistakesAreNamedAtStart() throws {
        let folder = try themeFolder([
            "challange.mustache": "typo", "chooser.mustache": "{{#providers}}unclosed", "pages.css": "x{}</style><script>alert(1)</script>",
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            _ = try PageTheme.load(directory: folder.path)
            Issue.record("a broken theme loaded")
        } catch {
            let messages = error.issues.map(\.description)
            #expect(messages.count == 3)
            #expect(messages.allSatisfy { $0.hasPrefix("server.themeDir: ") })
            #expect(messages.contains { $0.contains("challange.mustache: not a page of the theme") })
            #expect(messages.contains { $0.contains("chooser.mustache: not a valid Mustache template") })
            #expect(messages.contains { $0.contains("pages.css: must not contain '</'") })
        }
        do {
            _ = try PageTheme.load(directory: folder.path + "-missing")
            Issue.record("a missing folder loaded")
        } catch {
            #expect(error.issues.first?.description.contains("is not a folder this process can read") == true)
        }
    }
}
