import Foundation
import GatehousePluginKit

/// What the signed-in person does with their passkeys and security keys: list them (name, created,
/// last used, backup state), rename one, remove one. Removing needs a fresh sign-in through this
/// instance; adding one is a registration flow with the person's access token.
extension WebAuthnProvider {
    public var accountOperations: [AccountOperation] {
        [
            AccountOperation(
                name: "list", summary: "The account's passkeys and security keys: id, name, created, last used, backup eligibility and state.", inputs: [],
                run: { _, context in ["credentials": .array(try await book.credentials(of: context.account.id).map { $0.value.summary(account: context.account.id) })] }
            ),
            AccountOperation(
                name: "rename", summary: "Renames one of the account's credentials.",
                inputs: [.text("credential", label: "Credential id", maxLength: 1400), .text("name", label: "Name", maxLength: 64)],
                run: { fields, context in try await rename(fields, context) }
            ),
            AccountOperation(
                name: "remove", summary: "Removes one of the account's credentials. Needs a sign-in through this instance within `freshSignIn`.",
                inputs: [.text("credential", label: "Credential id", maxLength: 1400)],
                run: { fields, context in try await remove(fields, context) }
            ),
        ]
    }

    func rename(_ fields: ChallengeResponse, _ context: AccountOperationContext) async throws -> JSONValue {
        let accountID = context.account.id
        let name = try fields.string("name").trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.count <= 64 else { throw BrokerError(.invalidRequest, .badRequest, "A name has 1 to 64 characters.") }
        let target = try fields.string("credential")
        guard try await book.credentials(of: accountID).contains(where: { $0.value.id == target }) else { throw notOurs }
        let renamed = try await book.update(target, conflict: "The credential changed at the same time elsewhere; try again.") { stored in
            guard var credential = stored else { throw notOurs }
            credential.name = name
            return credential
        }
        guard let renamed else { throw notOurs }
        return renamed.summary(account: accountID)
    }

    func remove(_ fields: ChallengeResponse, _ context: AccountOperationContext) async throws -> JSONValue {
        let accountID = context.account.id
        try context.requireSignIn(within: config.freshSignIn, now: environment.clock.now, passing: id)
        let target = try fields.string("credential")
        guard try await book.credentials(of: accountID).contains(where: { $0.value.id == target }), let removed = try await book.remove(target) else { throw notOurs }
        await audit("webauthn.removed", app: context.app.id, account: accountID, details: ["credential": removed.id, "by": "account"])
        return ["removed": .string(removed.id)]
    }

    var notOurs: BrokerError { BrokerError(.notFound, .notFound, "The account has no such credential.") }
}
