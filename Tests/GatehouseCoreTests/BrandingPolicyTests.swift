import Foundation
@testable import GatehouseCore
import Testing

/// An app's branding reaches its pages only in forms a page shows safely: an https or small data:
/// logo, a hex colour dark enough for white text, https or mailto links; each refusal names its path.
extension GatehouseCoreTests {
    func brandingIssue(_ branding: JSONValue) -> String? {
        do {
            _ = try ConfigNodeDecoder.decode(Policy.self, from: ConfigNode(json: ["branding": branding]), at: [ConfigIssue.Key("policy")])
            return nil
        } catch {
            return error.issues.first.map { "\($0.path): \($0.message)" } ?? "\(error)"
        }
    }

    @Test func brandingAcceptsWhatAPageShowsSafely() throws {
        #expect(
            brandingIssue([
                "displayName": "Notes", "logo": "https://cdn.example/logo.svg", "primaryColor": "#0b5cad", "supportURL": "mailto:help@notes.example",
                "privacyURL": "https://notes.example/privacy",
            ]) == nil)
        #expect(brandingIssue(["logo": .string("data:image/png;base64," + Data(repeating: 7, count: 300).base64EncodedString()), "primaryColor": "#333"]) == nil)
        let policy = try ConfigNodeDecoder.decode(Policy.self, from: ConfigNode(json: ["branding": ["logo": "https://cdn.example:8443/a/logo.png"]]), at: [])
        #expect(policy.branding.logoOrigin == "https://cdn.example:8443")
        // Empty values are none (how the console clears one).
        #expect(try ConfigNodeDecoder.decode(Policy.self, from: ConfigNode(json: ["branding": ["logo": ""]]), at: []).branding.logo == nil)
    }

    @Test func brandingRefusesWhatAPageCouldNotShowSafely() {
        #expect(brandingIssue(["primaryColor": "#ffff00"])?.hasPrefix("policy.branding.primaryColor: is too light for white text on it") == true)
        #expect(brandingIssue(["primaryColor": "blue; background:url(x)"])?.hasPrefix("policy.branding.primaryColor: must be a hex colour") == true)
        #expect(brandingIssue(["logo": "javascript:alert(1)"])?.hasPrefix("policy.branding.logo:") == true)
        #expect(brandingIssue(["logo": "http://cdn.example/logo.png"])?.hasPrefix("policy.branding.logo:") == true)
        #expect(brandingIssue(["logo": "https://cdn.example/a'b.png"])?.hasPrefix("policy.branding.logo:") == true)
        #expect(brandingIssue(["logo": "data:text/html;base64,PHNjcmlwdD4="])?.hasPrefix("policy.branding.logo:") == true)
        let huge = "data:image/png;base64," + String(repeating: "A", count: BrandingPolicy.maxLogoBytes)
        #expect(brandingIssue(["logo": .string(huge)])?.hasPrefix("policy.branding.logo:") == true)
        #expect(brandingIssue(["supportURL": "javascript:alert(1)"])?.hasPrefix("policy.branding.supportURL:") == true)
        #expect(brandingIssue(["displayName": .string(String(repeating: "n", count: 101))])?.hasPrefix("policy.branding.displayName:") == true)
        #expect(brandingIssue(["colour": "#000"])?.contains("colour") == true)
    }
}
