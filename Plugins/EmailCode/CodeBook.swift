import Crypto
import Foundation
import GatehousePluginKit
import GatehouseSupport
import Logging
import Synchronization

/// Makes, sends, keeps and checks one-time codes. A code is kept only as an HMAC of the code and what
/// it is bound to (a flow, an attachment), in the store, so any node can check it; it is used up by
/// the first right answer; it works only until it expires; and it is stored only after the mail
/// server accepted the message, so no code the person never received is ever usable.
struct CodeBook: Sendable {
    let config: EmailCodePlugin.Config
    let environment: PluginEnvironment
    let hashKey: HashKey

    init(config: EmailCodePlugin.Config, environment: PluginEnvironment) {
        self.config = config
        self.environment = environment
        self.hashKey = HashKey(configured: config.codeHashKey, storage: environment.storage)
    }

    /// A code as stored: never the code itself.
    struct Record: Codable, Sendable {
        var digest: String
        var address: EmailAddress
        var issuedAt: Date
        var expiresAt: Date
    }

    private var clock: any BrokerClock { environment.clock }
    private var lockouts: LockoutBook { environment.lockouts }

    static func addressKey(_ address: EmailAddress) -> String { "address:\(address.value)" }
    /// The lock a code's wrong guesses count towards: the address's sign-in codes, or apart from them
    /// its recovery codes, so that a stranger guessing at a password reset never locks the sign-in.
    static func lockKey(_ address: EmailAddress, binding: String) -> String {
        CodeBinding.isRecovery(binding) ? "recovery:\(address.value)" : addressKey(address)
    }
    static func recordKey(_ binding: String) -> String { "code:\(binding)" }

    // MARK: - Sending

    /// `language`: the built-in message's (an operator's own template is sent as written).
    func send(to address: EmailAddress, binding: String, appID: String, appName: String, clientIP: String?, language: String = "en") async throws -> CodeDelivery {
        // A locked address gets no mail: the lock would refuse the code anyway.
        try await lockouts.refuseIfLocked(Self.lockKey(address, binding: binding), what: "This email address")
        let now = clock.now
        let existing = try await environment.storage.get(Record.self, key: Self.recordKey(binding))
        if let existing, existing.value.issuedAt.addingTimeInterval(config.resend.interval.timeInterval) > now {
            let wait = existing.value.issuedAt.addingTimeInterval(config.resend.interval.timeInterval).timeIntervalSince(now)
            throw BrokerError(.rateLimited, .tooManyRequests, "A code was sent moments ago; wait before asking for another.", retryAfter: max(1, Int(wait.rounded(.up))))
        }
        // The client's own limit first: a client over it must not use up the address's quota.
        if let clientIP {
            try await lockouts.limitRate(
                "sent-ip:\(clientIP)", limit: config.resend.maxPerIP, window: config.resend.window,
                message: "Too many codes were asked for from this address; try again later."
            )
        }
        // Recovery mail has its own quota: asking for reset codes must not use up the sign-in's.
        try await lockouts.limitRate(
            (CodeBinding.isRecovery(binding) ? "sent-recovery:" : "sent:") + address.value, limit: config.resend.maxPerAddress, window: config.resend.window,
            message: "Too many codes were sent to this address; try again later."
        )

        let code = Self.newCode(length: config.codeLength)
        let message = config.template(for: appID, language: language).message(
            to: address, code: code, appName: appName, minutes: config.codeLifetime.value / 60,
            fallbackSubject: config.defaultSubject(language: language)
        )
        do {
            try await environment.mailer.send(message)
        } catch {
            environment.logger.warning("code not delivered", metadata: ["to": .string(address.masked), "reason": .string(String(describing: error))])
            throw BrokerError(.deliveryFailed, .unavailable, "The code could not be sent; try again in a moment.", retryAfter: 5)
                .because(String(describing: error))
        }

        let record = Record(
            digest: try await digest(code, binding: binding), address: address, issuedAt: now, expiresAt: now.addingTimeInterval(config.codeLifetime.timeInterval))
        try await keep(record, binding: binding)
        environment.logger.info("code sent", metadata: ["to": .string(address.masked)])
        return CodeDelivery(sentTo: address, expiresAt: record.expiresAt, resendAfter: now.addingTimeInterval(config.resend.interval.timeInterval))
    }

    /// Stores the newest code of a binding; the one it replaces stops working. The record outlives the
    /// code a little, so that a late answer hears `code_expired` rather than that there was none.
    private func keep(_ record: Record, binding: String) async throws {
        let storage = environment.storage
        let key = Self.recordKey(binding)
        let keptUntil = record.expiresAt.addingTimeInterval(config.codeLifetime.timeInterval)
        try await storage.update(Record.self, key: key, conflict: "The code could not be stored; ask for a new one.") { _ in .store(record, expiresAt: keptUntil) }
    }

    /// `length` decimal digits, uniformly from the system CSPRNG.
    static func newCode(length: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let bound = (0..<length).reduce(UInt64(1)) { value, _ in value * 10 }
        let number = UInt64.random(in: 0..<bound, using: &generator)
        let digits = String(number)
        return String(repeating: "0", count: length - digits.count) + digits
    }

    // MARK: - Checking

    func check(_ answer: String, binding: String) async throws -> EmailAddress {
        let code = answer.trimmingCharacters(in: .whitespaces)
        guard code.count == config.codeLength, code.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw BrokerError.invalidAnswer("The code has \(config.codeLength) digits.")
        }
        let storage = environment.storage
        let key = Self.recordKey(binding)
        let now = clock.now
        guard let stored = try await storage.get(Record.self, key: key), stored.value.expiresAt > now else {
            throw BrokerError(.codeExpired, .badRequest, "The code has expired or was replaced; ask for a new one.")
        }
        let record = stored.value
        let lockKey = Self.lockKey(record.address, binding: binding)
        return try await lockouts.guess(lockKey, what: "This email address", rule: config.lockout, auditDetails: ["address": record.address.masked]) {
            guard SecretDigest.constantTimeEquals(try await digest(code, binding: binding), record.digest) else {
                return .wrong(BrokerError(.invalidCode, .failedAttempt, "The code is not right.").because("wrong_code"))
            }
            // Single use: of two racing right answers only the one that deletes the record wins; and a
            // code a resend replaced meanwhile (a newer version) is not the one deleted.
            guard try await storage.delete(key: key, version: stored.version) else {
                return .void(BrokerError(.codeExpired, .badRequest, "The code was already used; ask for a new one."))
            }
            return .right(record.address)
        }
    }

    private func digest(_ code: String, binding: String) async throws -> String {
        let key = try await hashKey.key()
        return SecretDigest.hex(HMAC<SHA256>.authenticationCode(for: Data("\(binding)\n\(code)".utf8), using: key))
    }
}

/// The HMAC key of the codes: from config, or made once per instance and kept in the store (shared by
/// every node), read once per process.
final class HashKey: Sendable {
    private let storage: PluginStorage
    private let cached: Mutex<SymmetricKey?>

    init(configured: String?, storage: PluginStorage) {
        self.storage = storage
        self.cached = Mutex(configured.map { SymmetricKey(data: Data($0.utf8)) })
    }

    func key() async throws -> SymmetricKey {
        if let key = cached.withLock({ $0 }) { return key }
        let name = "hash-key"
        let bytes: Data
        do {
            // The first node to get here makes the key (sealed); every other one reads that one.
            if try await storage.secret(key: name) == nil {
                _ = try await storage.insertSecret(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }, key: name)
            }
            guard let stored = try await storage.secret(key: name) else { throw BrokerError.internalFailure("The code key is not readable.") }
            bytes = stored.value
        } catch SecretSealerError.notSealed {
            // Kept in clear by an earlier version (base64url text as JSON): seal it in place.
            guard let legacy = try await storage.get(String.self, key: name), let clear = Base64URL.decode(legacy.value) else {
                throw BrokerError.internalFailure("The code key is not readable.")
            }
            _ = try await storage.replaceWithSecret(clear, key: name, version: legacy.version)
            bytes = clear
        }
        let key = SymmetricKey(data: bytes)
        cached.withLock { $0 = key }
        return key
    }
}
