import Foundation
import GatehouseCore
import GatehouseTesting
import Testing

@testable import SAML

/// The `saml` plugin through the broker's engine: a native app's sign-in, the IdP's Response at the
/// callback (named by `RelayState`), the account it makes, and what the plugin refuses end to end.
@Suite("SAML")
struct SAMLTests {
    static let idp = TestIdP.shared
    static let spEntityID = "https://broker.test/saml/corp"

    static func yaml(_ extra: String = "") -> String {
        func indented(_ pem: String, _ spaces: Int) -> String {
            pem.split(separator: "\n").map { String(repeating: " ", count: spaces) + $0 }.joined(separator: "\n")
        }
        return """
            providers:
              - id: corp
                type: saml
                name: Corp SSO
                config:
                  entityID: \(spEntityID)
                  idp:
                    entityID: \(TestIdP.entityID)
                    ssoURL: \(TestIdP.ssoURL)
                    certificates:
                      - |
            \(indented(idp.certificatePEM, 12))
                  privateKey: |
            \(indented(idp.spKeyPEM, 8))
                  certificate: |
            \(indented(idp.spCertificatePEM, 8))
                  groupsPrefix: "corp:"
            \(extra)
            apps:
              - id: phone
                redirectURIs: [com.example.phone:/back]
                policy:
                  identityProviders: [corp]
                  selfRegistration: true
            """
    }

    /// A broker node; `sharing` another node's store makes a second node of the same deployment.
    static func broker(_ extra: String = "", clock: TestClock = TestClock(), sharing: TestBroker? = nil) async throws -> TestBroker {
        var registry = PluginRegistry()
        registry.register(SAMLPlugin.self)
        return try await TestBroker.make(yaml: yaml(extra), registry: registry, temporary: sharing?.temporary, clock: clock)
    }

    /// A started native sign-in: the flow, the AuthnRequest's ID, and the app's PKCE verifier.
    struct Started {
        var flowID: String
        var requestID: String
        var verifier: String
        var url: String
    }

    static func start(_ test: TestBroker) async throws -> Started {
        let verifier = RandomToken.make()
        let (flowID, challenge) = try await test.start(
            FlowRequest(appID: "phone", providerID: "corp"), returnURI: "com.example.phone:/back", codeChallenge: PKCE.challenge(for: verifier))
        let url = try #require(challenge.fields["url"]?.stringValue)
        let query = try #require(URLComponents(string: url)?.queryItems)
        #expect(query.first { $0.name == "RelayState" }?.value == flowID)
        let encoded = try #require(query.first { $0.name == "SAMLRequest" }?.value)
        let request = try inflateStored(try #require(Data(base64Encoded: encoded)))
        let id = try #require(request.range(of: "ID=\"").map { request[$0.upperBound...].prefix { $0 != "\"" } })
        return Started(flowID: flowID, requestID: String(id), verifier: verifier, url: url)
    }

    /// Reads the stored-block DEFLATE stream the plugin writes.
    static func inflateStored(_ data: Data) throws -> String {
        var bytes = [UInt8](data), output: [UInt8] = []
        while bytes.count >= 5 {
            let length = Int(bytes[1]) | Int(bytes[2]) << 8
            output += bytes[5..<5 + length]
            let final = bytes[0] & 1 == 1
            bytes.removeFirst(5 + length)
            if final { break }
        }
        return String(decoding: output, as: UTF8.self)
    }

    static var acsURL: String { "http://127.0.0.1:8080/oauth2/callback/corp" }

    /// Sends `response` to the callback and goes on as the app: the tokens, or the error the app heard.
    static func deliver(_ test: TestBroker, _ started: Started, _ response: String) async throws -> Result<(IssuedTokens, Account?), Refused> {
        let outcome = try await test.engine.callback(
            state: started.flowID, stateParameter: "RelayState", answer: ChallengeResponse(["SAMLResponse": .string(Data(response.utf8).base64EncodedString())]),
            cookie: nil, crossSitePost: true)
        guard case .redirect(let location) = outcome, let items = URLComponents(string: location)?.queryItems else {
            throw FlowDriverError.unexpectedOutcome("\(outcome)")
        }
        if let error = items.first(where: { $0.name == "error" })?.value { return .failure(Refused(code: error)) }
        let code = items.first { $0.name == "code" }?.value ?? ""
        guard
            case .completed(_, let tokens, let account, _) = try await test.engine.resume(
                flowID: started.flowID, answer: ChallengeResponse(["code": .string(code), "codeVerifier": .string(started.verifier)]), client: nil)
        else { throw FlowDriverError.unexpectedOutcome("not completed") }
        return .success((tokens, account))
    }

    struct Refused: Error { var code: String }

    static func goodResponse(_ test: TestBroker, _ started: Started, change: (inout TestIdP.AssertionParts) -> Void = { _ in }) -> String {
        var parts = TestIdP.AssertionParts(now: test.clock.now, audience: spEntityID, recipient: acsURL, inResponseTo: started.requestID)
        change(&parts)
        return idp.responseXML(inResponseTo: started.requestID, destination: acsURL, now: test.clock.now, content: idp.signed(idp.assertionXML(parts)))
    }

    @Test("a signed assertion from the IdP signs the person in: the persistent NameID is the subject, attributes become the profile and groups")
    func signedAssertionSignsIn() async throws {
        let test = try await Self.broker()
        #expect(test.broker.config.server.issuer + "/oauth2/callback/corp" == Self.acsURL)
        let started = try await Self.start(test)
        let (_, account) = try await Self.deliver(test, started, Self.goodResponse(test, started)).get()
        let links = try await test.store.identityLinks(accountID: try #require(account).id)
        #expect(links.map(\.subject) == ["alice"])
        #expect(links.first?.providerID == "corp")
        let identity = try #require(account)
        #expect(identity.username == "alice@corp.test" || identity.username == "alice")
    }

    @Test("the same assertion ID is used once: a second response carrying it is refused, even for a new request")
    func assertionIDIsUsedOnce() async throws {
        let test = try await Self.broker()
        let first = try await Self.start(test)
        let id = "_replayed-assertion"
        _ = try await Self.deliver(test, first, Self.goodResponse(test, first) { $0.id = id }).get()
        let second = try await Self.start(test)
        let replay = try await Self.deliver(test, second, Self.goodResponse(test, second) { $0.id = id })
        #expect(throws: Refused.self) { try replay.get() }
        // A fresh ID on the same new request would have passed: the refusal is the replay's.
        let third = try await Self.start(test)
        _ = try await Self.deliver(test, third, Self.goodResponse(test, third)).get()
    }

    @Test("one use per assertion on every node: an assertion used at one node is refused at another that shares the store")
    func assertionIDIsUsedOnceAcrossNodes() async throws {
        let nodeA = try await Self.broker()
        let nodeB = try await Self.broker(clock: nodeA.clock, sharing: nodeA)
        let id = "_used-at-node-a"
        let first = try await Self.start(nodeA)
        _ = try await Self.deliver(nodeA, first, Self.goodResponse(nodeA, first) { $0.id = id }).get()
        let second = try await Self.start(nodeB)
        let replay = try await Self.deliver(nodeB, second, Self.goodResponse(nodeB, second) { $0.id = id })
        #expect(throws: Refused.self) { try replay.get() }
        // Node B takes a fresh assertion: the refusal was the replay's.
        let third = try await Self.start(nodeB)
        _ = try await Self.deliver(nodeB, third, Self.goodResponse(nodeB, third)).get()
    }

    @Test("a response to another request (InResponseTo) is refused, and ends the flow")
    func anotherRequestIsRefused() async throws {
        let test = try await Self.broker()
        let started = try await Self.start(test)
        var other = started
        other.requestID = "_someone-else"
        let result = try await Self.deliver(test, started, Self.goodResponse(test, other))
        #expect((try? result.get()) == nil)
        await #expect(throws: BrokerError.self) { _ = try await Self.deliver(test, started, Self.goodResponse(test, started)) }
    }

    @Test("an encrypted assertion (AES-256-GCM, and AES-128-CBC in a signed Response; RSA-OAEP) decrypts with the SP key and signs in")
    func encryptedAssertionSignsIn() async throws {
        let test = try await Self.broker()
        for cipher in [TestIdP.ContentCipher.aes256GCM, .aes128CBC] {
            let started = try await Self.start(test)
            let parts = TestIdP.AssertionParts(now: test.clock.now, audience: Self.spEntityID, recipient: Self.acsURL, inResponseTo: started.requestID)
            let content = Self.idp.encrypted(Self.idp.signed(Self.idp.assertionXML(parts)), cipher: cipher)
            var response = Self.idp.responseXML(inResponseTo: started.requestID, destination: Self.acsURL, now: test.clock.now, content: content)
            // CBC only under a signed Response (its ciphertext must not be alterable).
            if cipher == .aes128CBC { response = Self.idp.signed(response) }
            _ = try await Self.deliver(test, started, response).get()
        }
    }

    @Test("allowedGroups and requiredClaims refuse people who do not match, as access_denied")
    func filtersRefuse() async throws {
        let test = try await Self.broker("      allowedGroups: [admins]")
        let started = try await Self.start(test)
        let result = try await Self.deliver(test, started, Self.goodResponse(test, started))
        #expect(throws: Refused(code: "access_denied")) { try result.get() }
        let member = try await Self.start(test)
        _ = try await Self.deliver(test, member, Self.goodResponse(test, member) { $0.attributes["groups"] = ["admins"] }).get()
    }

    @Test("the SP metadata names the entity, the ACS URL and the SP certificate for signing and encryption")
    func metadataIsServed() async throws {
        let test = try await Self.broker()
        let provider = try #require(test.broker.plugins.identityProviders["corp"] as? SAMLProvider)
        var call = PluginEndpointCall(endpoint: provider.endpoints[0], fields: ChallengeResponse([:]))
        call.parameters = ["instance": "corp"]
        let answer = try await provider.endpoints[0].handle(call)
        call.parameters = ["instance": "other"]
        await #expect(throws: BrokerError.self) { _ = try await provider.endpoints[0].handle(call) }
        let document = try #require(answer.document)
        #expect(document.contentType == "application/samlmetadata+xml")
        let metadata = try SAMLXMLDocument(parsing: document.body)
        let root = try #require(metadata.root)
        #expect(root.attribute("entityID") == Self.spEntityID)
        let descriptor = try #require(root.children("SPSSODescriptor", in: SAMLNamespace.metadata).first)
        #expect(descriptor.children("AssertionConsumerService", in: SAMLNamespace.metadata).first?.attribute("Location") == Self.acsURL)
        #expect(descriptor.children("KeyDescriptor", in: SAMLNamespace.metadata).compactMap { $0.attribute("use") } == ["signing", "encryption"])
    }
}

extension SAMLTests.Refused: Equatable {}
