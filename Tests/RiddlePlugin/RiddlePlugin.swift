import Foundation
import GatehousePluginKit
import GatehouseSupport

/// A plugin that exists only for tests, to prove the plugin boundary: its `riddle` challenge type is
/// one the server has never heard of (a name and a secret answer, a hidden field, a "hint" button and
/// a link-out), yet the flow API and the generic browser page handle it with no change to the server.
public enum RiddlePlugin: PluginFactory {
    public static let typeName = "riddle"
    public typealias Settings = RiddleSettings

    /// `providers[].config` of a `riddle` instance.
    public struct Config: Decodable, Sendable {
        public var question: String
        public var answer: String
        /// Another identity provider (a second riddle) the person must also pass, as the same name:
        /// a flow continuation (`FlowStep.continueWith`).
        public var handOffTo: String?
        /// Another identity provider the flow is handed over to for good (`FlowStep.handOver`): whoever
        /// it identifies under the name given here is the flow's identity, and this riddle is told
        /// when the flow completes.
        public var handOverTo: String?
    }

    public static let challenges = [RiddleProvider.challenge]
    /// Its riddle page's texts (the test user of `PluginEndpointCall.language` beside `activation`).
    public static let translations = TextTranslations([
        "A riddle": ["de": "Ein Rätsel", "fr": "Une énigme", "es": "Un acertijo", "nl": "Een raadsel"],
        "{letters} letters.": ["de": "{letters} Buchstaben.", "fr": "{letters} lettres.", "es": "{letters} letras.", "nl": "{letters} letters."],
    ])

    public static func make(id: String, config: Config, environment: PluginEnvironment) throws -> RiddleProvider {
        guard config.handOffTo == nil, config.handOverTo == nil else {
            throw ConfigIssue(path: config.handOffTo == nil ? "handOverTo" : "handOffTo", "a riddle that hands its flows on is of type handing-riddle")
        }
        return RiddleProvider(id: id, config: config, clock: environment.clock, storage: environment.storage)
    }
}

/// The riddle that hands its flows on (`handOffTo`, `handOverTo`). Handing flows on is a capability an
/// instance type adopts or not, so this is a plugin type of its own (`HandingRiddle`), found by what it is.
public enum HandingRiddlePlugin: PluginFactory {
    public static let typeName = "handing-riddle"
    public typealias Settings = RiddleSettings
    public typealias Config = RiddlePlugin.Config

    public static let challenges = [RiddleProvider.challenge]

    public static func make(id: String, config: Config, environment: PluginEnvironment) throws -> HandingRiddle {
        HandingRiddle(riddle: RiddleProvider(id: id, config: config, clock: environment.clock, storage: environment.storage))
    }
}

/// What an app says about its riddle (`policy.plugins.<instance>`): whether the hint button works, and
/// how strictly answers are compared. Exists to prove that per-app settings need no broker change.
public struct RiddleSettings: PluginSettings {
    public enum Matching: String, Codable, Sendable, CaseIterable { case exact, anyCase = "any-case" }

    public var hints: Bool
    public var matching: Matching

    public init() { (hints, matching) = (true, .anyCase) }

    public static let fields = [
        SettingField("hints", label: "Offer a hint"),
        SettingField("matching", label: "Answers match", choices: Matching.allCases.map(\.rawValue), hint: "exact: letter case counts."),
    ]

    enum CodingKeys: String, CodingKey { case hints, matching }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        hints = try container.decodeIfPresent(Bool.self, forKey: .hints) ?? true
        let name = try container.decodeIfPresent(String.self, forKey: .matching) ?? Matching.anyCase.rawValue
        guard let matching = Matching(rawValue: name) else {
            throw ConfigIssue(path: decoder.codingPath + [CodingKeys.matching], "must be exact or any-case, got '\(name)'")
        }
        self.matching = matching
    }
}

/// Asks the configured riddle and identifies whoever answers it right by the name they give.
public struct RiddleProvider: IdentityProvider {
    public let id: String
    let config: RiddlePlugin.Config
    let clock: any BrokerClock
    let storage: PluginStorage

    static let challenge = ChallengeDescription(
        type: "riddle", summary: "A riddle to answer.", title: "Answer the riddle", prompt: "Riddle: {question}", submitLabel: "Answer",
        elements: [
            .text("name", label: "Your name", autocomplete: "nickname", maxLength: 32), .secret("answer", label: "The answer", autocomplete: "off", maxLength: 64),
            .hidden("round", label: "Round", maxLength: 8, prefill: "round"), .action("hint", label: "Give me a hint"), .action("give_up", label: "Give up"),
            .link(urlField: "help", label: "Riddle rules"), .detail("question", .string, "The riddle."), .detail("round", .string, "Which asking this is."),
            .detail("picture", .string, "A picture of a sphinx (an SVG `data:` URL)."), .detail("rules", .array, "The rules, one per line."),
            .image(field: "picture", alt: "A sphinx"), .fact(field: "round", label: "Round"), .fact(field: "rules", label: "Rules"),
            .script(source: riddleScript, data: ["round", "question"]),
        ])

    /// The riddle page's script: it reads the round from the challenge data and says so under the
    /// heading, to prove that a plugin's page script runs under the page's policy.
    static let riddleScript = """
        (() => {
          const data = JSON.parse(document.getElementById("challenge-data").dataset.challenge);
          const note = document.createElement("p");
          note.id = "riddle-script";
          note.textContent = "Round " + data.round + " of: " + data.question;
          document.querySelector("h1").after(note);
        })();
        """

    /// Who asked `whoami`, and when: a resource of people's data that administrators see on each
    /// account's page of the console and remove, but never add (`creatable: false`, `accountField`).
    struct Sighting: Codable, Sendable {
        var account: String
        var username: String
        var at: Double
    }

    public var adminResources: [AdminResource] {
        [
            AdminResource(
                name: "sightings", scope: .provider, summary: "People who asked the riddle who they are", itemKey: ["account"],
                columns: ["account", "username", "at"], accountField: "account", list: { _ in try await listSightings() },
                delete: { key, _, _ in try await removeSighting(of: key[0]) }
            )
        ]
    }

    func listSightings() async throws -> [JSONValue] {
        try await storage.all(Sighting.self, keyPrefix: "sighting:").map {
            ["account": .string($0.value.account), "username": .string($0.value.username), "at": .number($0.value.at)]
        }
    }

    func removeSighting(of account: String) async throws -> AdminChange {
        guard try await storage.delete(key: "sighting:\(account)") else { throw BrokerError(.notFound, .notFound, "No sighting of '\(account)'.") }
        return AdminChange(item: ["account": .string(account)], event: "sighting_removed")
    }

    /// A small SVG drawn by the plugin, to prove that a challenge page shows a plugin's picture.
    static let picture = ChallengeElement.svgDataURL(
        #"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><circle cx="5" cy="5" r="4" fill="orange"/></svg>"#
    )

    /// What a signed-in person may do at a riddle: see how they signed in, and (only with a sign-in of
    /// the last five minutes) have the riddle forget them.
    public var accountOperations: [AccountOperation] {
        [
            AccountOperation(name: "whoami", summary: "When and how the person signed in.", inputs: [], run: { _, context in try await whoami(context) }),
            AccountOperation(
                name: "forget_me", summary: "Needs a sign-in through this riddle within the last five minutes.", inputs: [],
                run: { _, context in
                    try context.requireSignIn(within: .minutes(5), now: clock.now, passing: id)
                    return ["forgotten": .string(context.account.username)]
                }
            ),
        ]
    }

    func whoami(_ context: AccountOperationContext) async throws -> JSONValue {
        let sighting = Sighting(account: context.account.id, username: context.account.username, at: clock.now.timeIntervalSince1970)
        if try await !storage.insert(sighting, key: "sighting:\(sighting.account)"), let seen = try await storage.get(Sighting.self, key: "sighting:\(sighting.account)")
        {
            _ = try await storage.replace(sighting, key: "sighting:\(sighting.account)", version: seen.version)
        }
        return ["signedInAt": context.authenticatedAt.map { .number($0.timeIntervalSince1970) } ?? .null, "methods": .array(context.methods.map { .string($0) })]
    }

    /// Endpoints of each caller kind, to prove that a plugin's routes need no broker or server change.
    public var endpoints: [PluginEndpoint] {
        [
            .forAccounts(.get, "question", summary: "The riddle this app asks, for the signed-in person.") { _, account, app in
                let settings = try app.settings(RiddleSettings.self, for: id)
                return PluginEndpointAnswer(["question": .string(config.question), "hints": .bool(settings.hints), "for": .string(account.username)])
            },
            .forApps(
                .post, "check", summary: "Whether an answer is right, for the app's back end.", inputs: [.text("answer", label: "Answer", maxLength: 64)]
            ) { call, app in
                let settings = try app.settings(RiddleSettings.self, for: id)
                let given = try call.fields.string("answer")
                let (left, right) = settings.matching == .exact ? (given, config.answer) : (given.lowercased(), config.answer.lowercased())
                return PluginEndpointAnswer(["correct": .bool(SecretDigest.constantTimeEquals(left, right))])
            },
            .forAdmins(.get, "answer-length", summary: "How many letters the answer has, for administrators.") { _, admin in
                PluginEndpointAnswer(["letters": .number(Double(config.answer.count)), "askedBy": .string(admin)])
            },
            // Every riddle instance claims this path; the one named in it answers (the others answer
            // `not_found`, so the broker asks the next).
            .pageForAnyone(.get, "riddles/:instance", summary: "A page showing the riddle.") { call in
                guard call.parameters["instance"] == id else { throw BrokerError(.notFound, .notFound, "No riddle '\(call.parameters["instance"] ?? "")'.") }
                return .page(
                    title: "A riddle", template: "riddle",
                    values: [
                        "name": .string(id), "question": .string(config.question),
                        "letters": .string(RiddlePlugin.translations.text("{letters} letters.", in: call.language, ["letters": String(config.answer.count)])),
                    ]
                )
            },
            // A document answered as it is (the second user of `PluginEndpointAnswer.document`
            // beside `saml`'s metadata): the riddle as plain text, and, to prove the broker refuses
            // it, the same as HTML.
            .forAnyone(.get, "riddles/:instance/:format", summary: "The riddle as a text document.") { call in
                guard call.parameters["instance"] == id else { throw BrokerError(.notFound, .notFound, "No riddle '\(call.parameters["instance"] ?? "")'.") }
                let type = call.parameters["format"] == "riddle.html" ? "text/html" : "text/plain; charset=utf-8"
                return .document(Data("\(id) asks: \(config.question)\n".utf8), contentType: type)
            },
        ]
    }

    public var pageTemplates: [String: String] { ["riddle": "<p>{{name}} asks: <q>{{question}}</q></p>{{#letters}}<p>{{letters}}</p>{{/letters}}"] }

    func ask(round: Int, hint: Bool) -> FlowStep {
        let challenge = Challenge(
            type: Self.challenge.type,
            fields: [
                "question": .string(config.question), "round": .string(String(round)), "help": "https://riddles.example/rules", "picture": .string(Self.picture),
                "rules": ["One answer per round", "Letter case counts only when the app says so"],
            ],
            prompt: hint ? "Hint: the answer has \(config.answer.count) letters. Riddle: \(config.question)" : nil
        )
        return .challenge(challenge, state: round)
    }

    public func begin(in context: FlowContext) async throws -> FlowStep {
        ask(round: 1, hint: false)
    }

    public func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        let round = try context.state(Int.self)
        let settings = try context.app.settings(RiddleSettings.self, for: id)
        if answer.values["give_up"] != nil { return .stop(state: round, details: ["riddle": ["gaveUp": true]]) }
        if answer.values["hint"] != nil {
            guard settings.hints else { throw BrokerError.invalidAnswer("This app gives no hints.") }
            return ask(round: round + 1, hint: true)
        }
        let name = try answer.string("name")
        let given = try answer.string("answer")
        let (left, right) = settings.matching == .exact ? (given, config.answer) : (given.lowercased(), config.answer.lowercased())
        guard SecretDigest.constantTimeEquals(left, right) else {
            throw BrokerError(.invalidCredentials, .failedAttempt, "That is not the answer.")
        }
        if let next = config.handOffTo { return .continueWith(providerID: next, state: name) }
        if let next = config.handOverTo {
            return .handOver(HandOver(providerID: next, state: name, methods: ["kba"], annotations: ["askedBy": .string(id)]))
        }
        return .identified(ExternalIdentity(providerID: id, subject: name, username: name, methods: ["kba"]))
    }

    /// The provider this one handed the flow to identified someone: the same name passes. After a
    /// hand-over that identity (renamed in capitals) is the flow's; after a continuation this
    /// riddle's own.
    public func resume(after identity: ExternalIdentity, in context: FlowContext) async throws -> FlowStep {
        let name = try context.state(String.self)
        guard identity.subject == name else {
            throw BrokerError(.accessDenied, .forbidden, "The second riddle was answered by someone else.").endingFlow()
        }
        if config.handOverTo != nil {
            var approved = identity
            approved.username = name.uppercased()
            return .identified(approved)
        }
        return .identified(ExternalIdentity(providerID: id, subject: name, username: name, methods: ["kba"]))
    }

    /// The person gave up and the flow is claimed: only now is the answer told (with the round).
    public func stopping(in context: FlowContext) async throws -> [String: JSONValue] {
        ["solution": ["answer": .string(config.answer), "round": .string(String(try context.state(Int.self)))]]
    }

    /// A flow handed over completes: a name this riddle refuses (`nobody`) ends it without tokens.
    public func completing(_ completion: FlowCompletion) async throws {
        if try completion.state(String.self) == "nobody" { throw BrokerError(.accessDenied, .forbidden, "Nobody may pass.") }
    }

    /// A flow this riddle identified someone in completed (every factor passed, the name linked to its
    /// account): the solver is audited under the account, which did not exist when the answer came
    /// for a new name. The test plugin's use of `identifiedFlowCompleted`, beside `webauthn`'s.
    public func identifiedFlowCompleted(_ completion: FlowCompletion) async throws {
        // What another provider handed over is not this one's to read: `handedState` proves it.
        let handed = (try? completion.state(String.self)) ?? "none"
        try await completion.audit("riddle.solved", details: ["name": completion.identity.subject, "handedState": handed])
    }

    /// The flow handed over completed: audited through the engine, and the app is told who asked.
    public func completed(_ completion: FlowCompletion) async throws -> [String: JSONValue] {
        try await completion.audit("riddle.passed", details: ["name": try completion.state(String.self)])
        return ["riddle": ["askedBy": .string(id), "account": .string(completion.account.id)]]
    }
}

// The optional capabilities it implements (each found once, when the registry builds it).
extension RiddleProvider: AccountOperationOffering {}
extension RiddleProvider: AdminResourceOffering {}
extension RiddleProvider: EndpointOffering {}
extension RiddleProvider: FlowStopping {}
extension RiddleProvider: IdentityCompleting {}

/// A riddle configured to hand its flows on (`handOffTo`, `handOverTo`): the same riddle, adopting
/// `HandingOver` as well.
public struct HandingRiddle: HandingOver, AccountOperationOffering, AdminResourceOffering, EndpointOffering, FlowStopping, IdentityCompleting {
    let riddle: RiddleProvider

    public var id: String { riddle.id }
    public var accountOperations: [AccountOperation] { riddle.accountOperations }
    public var adminResources: [AdminResource] { riddle.adminResources }
    public var endpoints: [PluginEndpoint] { riddle.endpoints }
    public var pageTemplates: [String: String] { riddle.pageTemplates }

    public func begin(in context: FlowContext) async throws -> FlowStep { try await riddle.begin(in: context) }
    public func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        try await riddle.resume(with: answer, in: context)
    }
    public func resume(after identity: ExternalIdentity, in context: FlowContext) async throws -> FlowStep {
        try await riddle.resume(after: identity, in: context)
    }
    public func completing(_ completion: FlowCompletion) async throws { try await riddle.completing(completion) }
    public func completed(_ completion: FlowCompletion) async throws -> [String: JSONValue] { try await riddle.completed(completion) }
    public func stopping(in context: FlowContext) async throws -> [String: JSONValue] { try await riddle.stopping(in: context) }
    public func identifiedFlowCompleted(_ completion: FlowCompletion) async throws { try await riddle.identifiedFlowCompleted(completion) }
}
