import Foundation

/// The one error type the broker shows to the outside: a stable machine code, a sentence for a person,
/// and, for lockouts and rate limits, when to come back. The server maps it to HTTP and OAuth error
/// responses one to one; plugins throw it to refuse an answer.
public struct BrokerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The category that decides the HTTP status and whether a flow counts a failed attempt.
    public enum Kind: Sendable, Equatable {
        /// The request itself is malformed (HTTP 400).
        case badRequest
        /// The caller did not prove who it is (HTTP 401).
        case unauthenticated
        /// The caller is known, but policy refuses (HTTP 403).
        case forbidden
        /// The thing asked for does not exist (HTTP 404).
        case notFound
        /// The request body is larger than the endpoint accepts (HTTP 413).
        case contentTooLarge
        /// The client did not send its request body in time (HTTP 408).
        case requestTimeout
        /// The request lost a race or collides with existing state (HTTP 409).
        case conflict
        /// An answer to a challenge was wrong; counts as a failed attempt (HTTP 400).
        case failedAttempt
        /// Too many attempts; come back later (HTTP 429).
        case tooManyRequests
        /// A dependency is down (HTTP 503).
        case unavailable
        /// A bug or an unexpected failure; details are logged, not shown (HTTP 500).
        case internalFailure
    }

    /// The machine code on the wire.
    public var code: ErrorCode
    /// What kind of failure it is: its HTTP status.
    public var kind: Kind
    /// A sentence for a person; never contains a secret.
    public var message: String
    /// Until when a lockout lasts.
    public var lockedUntil: Date?
    /// For lockouts that do not run out: only an administrator can lift them.
    public var permanent: Bool
    /// Seconds until a rate limit lets the caller try again.
    public var retryAfter: Int?
    /// For invalid input: each field at fault, by its exact path (`policy.accessTokenLifetime`).
    public var issues: [ConfigIssue]
    /// The precise cause, for logs and the audit log only, when the answer on the wire is kept vague
    /// on purpose (an assertion refused as `invalid_grant` because its signature was `bad_signature`).
    public var reason: String?
    /// Whether `reason` is also sent on the wire (as `reason` next to `error`): for refusals whose
    /// reason is a stable code the client can act on, and that tells an attacker nothing a probe
    /// would not (which attestation check failed).
    public var reasonIsPublic = false
    /// The flow cannot go on after this error (an upstream said no for good): the engine deletes it,
    /// so the same answer cannot be tried again.
    public var endsFlow: Bool
    /// A wrong answer reported as another error (the wrong code that locked an address answers
    /// `locked_out`): the engine counts it like any `.failedAttempt`.
    public var countsAsWrongAnswer: Bool
    /// A fresh DPoP nonce the client must put in its next proof (RFC 9449 section 8), sent as the
    /// `DPoP-Nonce` header.
    public var dpopNonce: String?
    /// For `insufficient_user_authentication`: how recent, in seconds, the sign-in must be (RFC 9470's
    /// `max_age` in the `WWW-Authenticate` challenge).
    public var maxAge: Int?

    /// An error; `message` is for a person and never holds a secret.
    public init(_ code: ErrorCode, _ kind: Kind, _ message: String, lockedUntil: Date? = nil, retryAfter: Int? = nil, issues: [ConfigIssue] = []) {
        self.code = code
        self.kind = kind
        self.message = message
        self.lockedUntil = lockedUntil
        self.permanent = false
        self.retryAfter = retryAfter
        self.issues = issues
        self.reason = nil
        self.endsFlow = false
        self.countsAsWrongAnswer = false
        self.dpopNonce = nil
        self.maxAge = nil
    }

    /// Whether the engine counts this error against the flow, the client address and the account.
    public var isWrongAnswer: Bool { kind == .failedAttempt || countsAsWrongAnswer }

    /// The same error, counted as a wrong answer.
    public func countingAsWrongAnswer() -> BrokerError {
        var error = self
        error.countsAsWrongAnswer = true
        return error
    }

    /// The same error with an internal reason attached.
    public func because(_ reason: String) -> BrokerError {
        var error = self
        error.reason = reason
        return error
    }

    /// The same error, with its reason sent on the wire.
    public func publicly(because reason: String) -> BrokerError {
        var error = because(reason)
        error.reasonIsPublic = true
        return error
    }

    /// The same error, ending the flow it happened in.
    public func endingFlow() -> BrokerError {
        var error = self
        error.endsFlow = true
        return error
    }

    /// `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }

    /// The HTTP status this error is answered with.
    public var httpStatus: Int {
        switch kind {
        case .badRequest, .failedAttempt: 400
        case .unauthenticated: 401
        case .forbidden: 403
        case .notFound: 404
        case .contentTooLarge: 413
        case .requestTimeout: 408
        case .conflict: 409
        case .tooManyRequests: 429
        case .unavailable: 503
        case .internalFailure: 500
        }
    }

    /// `invalid_request` (400) with `message`.
    public static func invalidRequest(_ message: String) -> BrokerError {
        BrokerError(.invalidRequest, .badRequest, message)
    }

    /// A request body over an endpoint's limit: `invalid_request` with HTTP 413 (Content Too Large).
    public static func bodyTooLarge(limit: Int) -> BrokerError {
        BrokerError(.invalidRequest, .contentTooLarge, "The request body is larger than the \(limit / 1024) KiB this endpoint accepts.")
    }

    /// A request body that did not arrive within `seconds`.
    public static func bodyTooSlow(seconds: Int) -> BrokerError {
        BrokerError(.invalidRequest, .requestTimeout, "The request body did not arrive within \(seconds) seconds.")
    }

    /// `invalid_answer`: the answer does not fit the challenge (400, a wrong answer that is not counted).
    public static func invalidAnswer(_ message: String) -> BrokerError {
        BrokerError(.invalidAnswer, .badRequest, message)
    }

    /// `locked_out`: until `until` (with `retryAfter`), or, when `until` lies centuries ahead, for
    /// good (`permanent`, HTTP 403) until an administrator unlocks it.
    public static func lockedOut(_ what: String, until: Date, now: Date) -> BrokerError {
        guard until < LockoutRule.permanentThreshold else {
            var error = BrokerError(.lockedOut, .forbidden, "\(what) is locked after too many failed attempts; an administrator must unlock it.")
            error.permanent = true
            return error
        }
        return BrokerError(
            .lockedOut, .tooManyRequests, "Too many failed attempts for \(what.prefix(1).lowercased() + what.dropFirst()); try again later.", lockedUntil: until,
            retryAfter: max(1, Int(until.timeIntervalSince(now).rounded(.up)))
        )
    }

    /// An unexpected failure (500); `message` is logged, a generic text is shown.
    public static func internalFailure(_ message: String = "The broker could not complete the request.") -> BrokerError {
        BrokerError(.serverError, .internalFailure, message)
    }
}
