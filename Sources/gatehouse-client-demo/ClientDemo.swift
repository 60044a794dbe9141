import ArgumentParser
import Foundation
import GatehouseClient

/// A small tour of the GatehouseClient SDK against a running broker: register this "device" with a
/// device key and a PIN, sign in with them, renew, log out. Keys and tokens are kept in `--state` so
/// the steps may also run one by one.
@main
struct ClientDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatehouse-client-demo",
        abstract: "Registers, signs in with a device key and a PIN, renews and logs out against a running Gatehouse broker.",
        subcommands: [Tour.self, Register.self, SignIn.self, Renew.self, State.self, Logout.self],
        defaultSubcommand: Tour.self
    )
}

/// What every step needs: where the broker is, which app and providers, where state is kept.
struct DemoOptions: ParsableArguments {
    @Option(help: "The broker's base URL.") var broker = "http://127.0.0.1:8080"
    @Option(help: "The app's client id (a public app).") var app = "demo-phone"
    @Option(help: "The device-key provider instance.") var deviceProvider = "device"
    @Option(help: "The PIN to create and sign in with.") var pin = "730519"
    @Option(help: "Where the device key, installation id and tokens are kept between steps.") var state = ".gatehouse-client-demo"

    func client() throws -> GatehouseClient {
        guard let url = URL(string: broker), url.scheme != nil else { throw ValidationError("--broker must be a URL, like http://127.0.0.1:8080") }
        let folder = URL(fileURLWithPath: state)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let installationFile = folder.appendingPathComponent("installation")
        let installationID: String
        if let saved = try? String(contentsOf: installationFile, encoding: .utf8), !saved.isEmpty {
            installationID = saved
        } else {
            installationID = "ins-" + UUID().uuidString.lowercased()
            try installationID.write(to: installationFile, atomically: true, encoding: .utf8)
        }
        return GatehouseClient(
            configuration: GatehouseConfiguration(
                baseURL: url, app: app, installation: Installation(id: installationID, platform: .ios, model: "demo", appVersion: "1.0", alias: "Demo device")
            ),
            keys: SoftwareKeyStore(directory: folder.appendingPathComponent("keys")),
            tokens: FileTokenStore(file: folder.appendingPathComponent("tokens.json"))
        )
    }
}

/// Answers what the tour meets: the device key's registration and assertion, and the PIN.
struct DemoDelegate: FlowDelegate {
    let pin: String

    func answer(_ challenge: Challenge, after error: GatehouseError?) async throws -> FlowAnswer {
        if let error { throw error }
        switch challenge {
        case .registerDeviceKey: return .registerDeviceKey()
        case .deviceKeyAssertion: return .signWithDeviceKey
        case .createPIN, .pin: return .pin(pin)
        default: throw ValidationError("the tour does not answer a '\(challenge.type)' challenge")
        }
    }
}

func report(_ outcome: FlowOutcome, _ what: String) throws {
    guard case .completed(let result) = outcome else { throw ValidationError("\(what) stopped without tokens") }
    print("\(what): account \(result.account?.id ?? "-"), \(result.tokens.tokenType) token until \(result.tokens.expiresAt)")
}

struct Tour: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Register, sign in, renew, show the state, log out.")
    @OptionGroup var options: DemoOptions

    func run() async throws {
        let client = try options.client()
        // The key stays after a logout: a second tour signs in with it instead of registering again.
        if try await client.deviceKey() == nil {
            try report(try await client.register(provider: options.deviceProvider, delegate: DemoDelegate(pin: options.pin)), "registered")
        } else {
            print("registered before: signing in with the key in \(options.state)")
        }
        try report(try await client.signIn(provider: options.deviceProvider, delegate: DemoDelegate(pin: options.pin)), "signed in")
        let renewed = try await client.renew()
        print("renewed: \(renewed.tokenType) token until \(renewed.expiresAt)")
        print("state: \(try await client.registrationState())")
        try await client.logout()
        print("logged out: state \(try await client.registrationState())")
    }
}

struct Register: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Register this device with a device key and a PIN.")
    @OptionGroup var options: DemoOptions
    func run() async throws {
        try report(try await options.client().register(provider: options.deviceProvider, delegate: DemoDelegate(pin: options.pin)), "registered")
    }
}

struct SignIn: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sign-in", abstract: "Sign in with the device key and the PIN.")
    @OptionGroup var options: DemoOptions
    func run() async throws {
        try report(try await options.client().signIn(provider: options.deviceProvider, delegate: DemoDelegate(pin: options.pin)), "signed in")
    }
}

struct Renew: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Renew the tokens with the refresh token.")
    @OptionGroup var options: DemoOptions
    func run() async throws {
        let renewed = try await options.client().renew()
        print("renewed: \(renewed.tokenType) token until \(renewed.expiresAt)")
    }
}

struct State: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Ask the broker where this installation stands.")
    @OptionGroup var options: DemoOptions
    func run() async throws {
        print("state: \(try await options.client().registrationState())")
    }
}

struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Log out: the broker revokes the tokens.")
    @OptionGroup var options: DemoOptions
    func run() async throws {
        try await options.client().logout()
        print("logged out")
    }
}
