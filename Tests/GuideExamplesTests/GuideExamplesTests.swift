import Foundation
import GatehouseCore
import GatehouseTesting
import GuideExamples
import Testing

/// The plugins of docs/writing-a-plugin.md, each step driven through the broker's real flow engine,
/// and the guide's code blocks held to the sources that are compiled here.
@Suite("GuideExamples")
struct GuideExamplesTests {
    static let yaml = """
        providers:
          - {id: hello, type: guide-hello}
          - {id: passwords, type: guide-password, config: {cost: 4}}
          - {id: word, type: guide-word}
        apps:
          - id: demo
            policy:
              identityProviders: [hello, passwords]
              authenticators: [word]
              secondFactor: word
              selfRegistration: true
              passwordPolicy: {minLength: 10}
              plugins: {word: {minLength: 8}}
        """

    static func broker() async throws -> TestBroker {
        var registry = PluginRegistry()
        registry.register(HelloPlugin.self)
        registry.register(PasswordBookPlugin.self)
        registry.register(SecretWordPlugin.self)
        return try await TestBroker.make(yaml: yaml, registry: registry)
    }

    @Test func theGuideShowsExactlyTheCodeThatIsCompiledHere() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let guide = try String(contentsOf: root.appendingPathComponent("docs/writing-a-plugin.md"), encoding: .utf8)
        let blocks = GuideBlocks.extract(guide)
        #expect(Set(blocks.keys) == ["HelloPlugin.swift", "PasswordBookPlugin.swift", "SecretWordPlugin.swift"])
        for (file, code) in blocks {
            let source = try String(contentsOf: root.appendingPathComponent("Tests/GuideExamples/\(file)"), encoding: .utf8)
            #expect(code == source, "docs/writing-a-plugin.md's \(file) differs from Tests/GuideExamples/\(file): run scripts/guide-code.py --write")
        }
    }

    @Test func theSmallestPluginSignsInWhoeverGivesAName() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        let started = try await test.start(FlowRequest(appID: "demo", providerID: "hello"))
        #expect(started.challenge.type == "guide_hello")
        let outcome = try await test.engine.resume(flowID: started.flowID, answer: ChallengeResponse(["name": "ada"]), client: nil)
        // The app asks a second factor of everyone: the new account chooses its secret word next.
        guard case .challenge(_, let challenge, _) = outcome else { Issue.record("expected the second factor, got \(outcome)"); return }
        #expect(challenge.type == "guide_word_choose")
    }

    @Test func thePasswordProviderRegistersChecksTheRulesAndLocksAfterFiveWrongPasswords() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        let tooShort = await #expect(throws: BrokerError.self) {
            _ = try await test.signIn(FlowRequest(appID: "demo", providerID: "passwords", purpose: .register), answer: ["username": "grace", "password": "short"])
        }
        #expect(tooShort?.code.rawValue.hasPrefix("password_") == true || tooShort?.code == .invalidRequest)
        let first = try await test.start(FlowRequest(appID: "demo", providerID: "passwords", purpose: .register))
        let registered = try await test.engine.resume(
            flowID: first.flowID, answer: ChallengeResponse(["username": "Grace", "password": "a long enough password"]), client: nil)
        guard case .challenge(let flowID, let choose, _) = registered else { Issue.record("expected the word to be chosen, got \(registered)"); return }
        #expect(choose.type == "guide_word_choose")
        let short = await #expect(throws: BrokerError.self) { _ = try await test.engine.resume(flowID: flowID, answer: ChallengeResponse(["word": "abc"]), client: nil) }
        #expect(short?.message.contains("at least 8") == true)
        guard case .completed(_, _, let account, _) = try await test.engine.resume(flowID: flowID, answer: ChallengeResponse(["word": "marmalade"]), client: nil) else {
            Issue.record("expected tokens")
            return
        }
        #expect(account?.username == "grace")

        for attempt in 1...5 {
            let refused = await #expect(throws: BrokerError.self) {
                _ = try await test.signIn(FlowRequest(appID: "demo", providerID: "passwords"), answer: ["username": "grace", "password": "not the password"])
            }
            #expect(refused?.code == (attempt < 5 ? .invalidCredentials : .lockedOut))
        }
        let locked = await #expect(throws: BrokerError.self) {
            _ = try await test.signIn(FlowRequest(appID: "demo", providerID: "passwords"), answer: ["username": "grace", "password": "a long enough password"])
        }
        #expect(locked?.code == .lockedOut)
    }

    @Test func theSecondFactorAsksTheWordItWasGivenAndRefusesAnother() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        func signIn(word: String) async throws -> FlowOutcome {
            let started = try await test.start(FlowRequest(appID: "demo", providerID: "hello"))
            let next = try await test.engine.resume(flowID: started.flowID, answer: ChallengeResponse(["name": "alan"]), client: nil)
            guard case .challenge(let flowID, _, _) = next else { throw BrokerError.internalFailure("no second factor") }
            return try await test.engine.resume(flowID: flowID, answer: ChallengeResponse(["word": .string(word)]), client: nil)
        }
        guard case .completed = try await signIn(word: "enigmatic") else { Issue.record("the first word is chosen"); return }
        guard case .completed = try await signIn(word: "ENIGMATIC") else { Issue.record("the word again passes"); return }
        let wrong = await #expect(throws: BrokerError.self) { _ = try await signIn(word: "bombe machine") }
        #expect(wrong?.code == .invalidCode)
        // An account that left without choosing a word cannot choose one at its next sign-in:
        // whoever passes its first factor then must not set its second.
        let first = try await test.start(FlowRequest(appID: "demo", providerID: "hello"))
        _ = try await test.engine.resume(flowID: first.flowID, answer: ChallengeResponse(["name": "joan"]), client: nil)
        let again = try await test.start(FlowRequest(appID: "demo", providerID: "hello"))
        let refused = await #expect(throws: BrokerError.self) {
            _ = try await test.engine.resume(flowID: again.flowID, answer: ChallengeResponse(["name": "joan"]), client: nil)
        }
        #expect(refused?.message.contains("no secret word") == true)
        // The word is kept as an HMAC under the instance's sealed key, never in clear.
        #expect(!Self.databaseText(test.temporary).contains("enigmatic"))
    }

    static func databaseText(_ temporary: TemporaryStore) -> String {
        ["", "-wal"].compactMap { FileManager.default.contents(atPath: temporary.path + $0) }.map { String(decoding: $0, as: UTF8.self) }.joined()
    }
}

/// The Swift blocks of the guide that name their file: a line `<!-- file: Name.swift -->` right
/// before the fence.
enum GuideBlocks {
    static func extract(_ markdown: String) -> [String: String] {
        var blocks: [String: String] = [:]
        var file: String?
        var lines: [String]?
        for line in markdown.components(separatedBy: "\n") {
            if var open = lines {
                if line == "```" {
                    blocks[file!] = open.joined(separator: "\n") + "\n"
                    (file, lines) = (nil, nil)
                } else {
                    open.append(line)
                    lines = open
                }
            } else if line.hasPrefix("<!-- file: "), line.hasSuffix(" -->") {
                file = String(line.dropFirst("<!-- file: ".count).dropLast(" -->".count))
            } else if line == "```swift", file != nil {
                lines = []
            }
        }
        return blocks
    }
}
