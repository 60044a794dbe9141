import Foundation
import GatehouseCore
import Mustache

/// An operator's look for the sign-in pages (`server.themeDir`), as Dex's `frontend.dir` and
/// Keycloak's themes: `<page>.mustache` files replace the built-in templates of those pages, and
/// `pages.css` is added after the built-in styles. Read and checked once, at start: an unknown file,
/// a template that does not parse or a stylesheet that could end its `<style>` element stops the
/// start with the file named. The pages' Content-Security-Policy stays as it is (no script, images
/// only from `data:` and an app's logo), whatever the templates say.
public struct PageTheme: Sendable {
    /// Templates by page name (`challenge`, `layout`...).
    public var templates: [String: String]
    /// Added after the built-in styles of every sign-in page.
    public var stylesheet: String?

    public init(templates: [String: String] = [:], stylesheet: String? = nil) {
        self.templates = templates
        self.stylesheet = stylesheet
    }

    /// The pages a theme may replace.
    public static let pageNames: [String] = PageRenderer.builtInTemplates.map(\.name).sorted()
    static let stylesheetName = "pages.css"
    static let maxStylesheetBytes = 65_536
    static let maxTemplateBytes = 65_536

    /// The theme in `directory`, or every mistake in it, each under `server.themeDir`.
    public static func load(directory: String) throws(ConfigIssues) -> PageTheme {
        let path = "server.themeDir"
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue,
            let files = try? FileManager.default.contentsOfDirectory(atPath: directory)
        else {
            throw ConfigIssues([ConfigIssue(path: path, "'\(directory)' is not a folder this process can read")])
        }
        var theme = PageTheme()
        var issues: [ConfigIssue] = []
        for file in files.sorted() where !file.hasPrefix(".") && !file.lowercased().hasPrefix("readme") {
            let url = URL(fileURLWithPath: directory).appendingPathComponent(file)
            guard let data = try? Data(contentsOf: url), let text = String(data: data, encoding: .utf8) else {
                issues.append(ConfigIssue(path: path, "\(file): not a readable UTF-8 file"))
                continue
            }
            if file == stylesheetName {
                if data.count > maxStylesheetBytes {
                    issues.append(ConfigIssue(path: path, "\(file): larger than \(maxStylesheetBytes) bytes"))
                } else if text.contains("</") || text.contains("<!--") {
                    issues.append(ConfigIssue(path: path, "\(file): must not contain '</' or '<!--' (it is placed in a <style> element)"))
                } else {
                    theme.stylesheet = text
                }
            } else if file.hasSuffix(".mustache"), pageNames.contains(String(file.dropLast(".mustache".count))) {
                let name = String(file.dropLast(".mustache".count))
                if data.count > maxTemplateBytes {
                    issues.append(ConfigIssue(path: path, "\(file): larger than \(maxTemplateBytes) bytes"))
                    continue
                }
                do {
                    var library = MustacheLibrary()
                    try library.register(text, named: name)
                    theme.templates[name] = text
                } catch {
                    issues.append(ConfigIssue(path: path, "\(file): not a valid Mustache template (\(error))"))
                }
            } else {
                issues.append(
                    ConfigIssue(
                        path: path, "\(file): not a page of the theme; it may hold \(stylesheetName) and \(pageNames.map { "\($0).mustache" }.joined(separator: ", "))"))
            }
        }
        if !issues.isEmpty { throw ConfigIssues(issues) }
        return theme
    }
}
