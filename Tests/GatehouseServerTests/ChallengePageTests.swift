import Foundation
import GatehouseCore
@testable import GatehouseServer
import Testing

extension GatehouseServerTests {
    /// The generic challenge page marks only required inputs `required`: a profile confirmation can
    /// be sent with the code field empty, a password form cannot be sent without the password.
    @Test func challengePagesRequireOnlyTheInputsTheirDeclarationRequires() {
        let profile = Challenge(type: ChallengeDescription.confirmProfile.type, fields: ["name": "Pat", "email": "pat@example.com"])
        let inputs = PageRenderer.inputs(of: .confirmProfile, for: profile, hasError: false)
        #expect(inputs.allSatisfy { ($0["required"] as? Bool) == false })
        #expect(inputs.first { ($0["name"] as? String) == "email" }?["value"] as? String == "pat@example.com")
        let credentials = PageRenderer.inputs(of: .credentials, for: .credentials(), hasError: false)
        #expect(credentials.allSatisfy { ($0["required"] as? Bool) == true })
    }
}
