import Foundation
import GatehouseClient
import GatehouseTesting
import Testing

/// What keeps an app's secrets safe around the flows: nothing secret in what the SDK's values print,
/// token files only their owner reads, no token over plain HTTP, and a logout that forgets the tokens
/// even when the broker cannot be told.
extension GatehouseClientTests {
    @Test func printedValuesNeverShowATokenPasswordPINOrCode() async throws {
        let (_, result) = try await registeredPhone()
        let refreshToken = try #require(result.tokens.refreshToken)
        var printed = [String(describing: result.tokens), "\(result)", String(reflecting: result)]
        var dumped = ""
        dump(result, to: &dumped)
        printed.append(dumped)
        for text in printed {
            #expect(!text.contains(result.tokens.accessToken) && !text.contains(refreshToken), "\(text)")
        }
        #expect(String(describing: result.tokens).contains("DPoP"), "what is not secret still shows")
        let answers: [(FlowAnswer, String)] = [
            (.credentials(username: "ada", password: "purple otter lantern"), "purple otter lantern"), (.pin("730519"), "730519"),
            (.activation(code: "ga1.abc.secret", pin: "48027"), "48027"), (.emailCode("604217"), "604217"), (.signedJWT("eyJ.secret.sig"), "eyJ.secret.sig"),
        ]
        for (answer, secret) in answers {
            var dumpedAnswer = ""
            dump(answer, to: &dumpedAnswer)
            #expect(!"\(answer)".contains(secret) && !String(reflecting: answer).contains(secret) && !dumpedAnswer.contains(secret), "\(answer)")
        }
        #expect("\(FlowAnswer.credentials(username: "ada", password: "x"))".contains("ada"))
    }

    @Test func tokenFilesAreTheirOwnersAloneAndReplacedWhole() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-sdk-files-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("tokens.json")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // A file left readable by everyone is replaced, not rewritten in place.
        try Data("{}".utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        let store = FileTokenStore(file: file)
        let (_, result) = try await registeredPhone(client: world.client("phone", tokens: store))
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try await store.load()?.refreshToken == result.tokens.refreshToken)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["tokens.json"], "no temporary file is left behind")
    }

    @Test func aTokenNeverGoesOutOverPlainHTTPExceptToThisMachine() async throws {
        let (client, _) = try await registeredPhone()
        let refused = await thrownError(GatehouseError.self) {
            _ = try await client.authorize(HTTPRequest(method: "GET", url: URL(string: "http://api.example.com/orders")!))
        }
        #expect(refused?.code == "transport")
        let lookalike = await thrownError(GatehouseError.self) {
            _ = try await client.authorize(HTTPRequest(method: "GET", url: URL(string: "http://127.0.0.1.example.com/orders")!))
        }
        #expect(lookalike?.code == "transport", "a name that starts like a loopback address is not one")
        #expect(try await client.authorize(HTTPRequest(method: "GET", url: URL(string: "http://127.0.0.1:9/orders")!)).headers["DPoP"] != nil)
        let secure = try await client.authorize(HTTPRequest(method: "GET", url: URL(string: "https://api.example.com/orders?page=2")!))
        #expect(secure.headers["Authorization"]?.hasPrefix("DPoP ") == true && secure.headers["DPoP"] != nil)
    }

    @Test func logoutForgetsTheTokensEvenWhenTheBrokerCannotBeReached() async throws {
        let (keys, tokens) = (SoftwareKeyStore(), InMemoryTokenStore())
        let (_, registered) = try await registeredPhone(client: world.client("phone", keys: keys, tokens: tokens))
        let port = try await BrokerProcess.freePorts(1)[0]
        let offline = GatehouseClient(
            configuration: GatehouseConfiguration(baseURL: URL(string: "http://127.0.0.1:\(port)")!, app: "phone", installation: Installation(platform: .ios)),
            tokens: tokens
        )
        #expect(await thrownError(GatehouseError.self) { try await offline.logout() }?.code == "transport")
        #expect(try await tokens.load() == nil)
        // The broker was never told: the refresh token still renews there (until it expires).
        let kept = InMemoryTokenStore()
        try await kept.save(registered.tokens)
        #expect(try await world.client("phone", keys: keys, tokens: kept).renew().refreshToken != nil)
    }
}
