import Foundation
import GatehouseCore
import Hummingbird

/// Turns every error into the broker's JSON error shape, `{"error": <machine code>,
/// "error_description": ..., "lockedUntil"?, "retryAfter"?}`, with the matching HTTP status.
/// Unexpected errors are logged with the request id and answered as `server_error` without details.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as BrokerError {
            if error.kind == .internalFailure {
                context.logger.error("request failed", metadata: ["error": .string(error.description)])
            }
            return ErrorBody(error).response()
        } catch let error as HTTPError {
            let code: ErrorCode =
                switch error.status.code {
                case 404: .notFound
                case 405: .invalidRequest
                case 400..<500: .invalidRequest
                default: .serverError
                }
            let body = ErrorBody(code: code.rawValue, description: error.body ?? error.status.reasonPhrase)
            return body.response(status: error.status)
        } catch {
            context.logger.error("request failed", metadata: ["error": .string(String(reflecting: error))])
            return ErrorBody(BrokerError.internalFailure()).response()
        }
    }
}

/// The JSON body of an error answer.
struct ErrorBody: Encodable {
    var error: String
    var errorDescription: String
    /// Which check refused, where the error's reason is public (attestation refusals).
    var reason: String?
    var lockedUntil: Date?
    /// A lockout only an administrator can lift.
    var permanent: Bool?
    var retryAfter: Int?
    /// Sent as the `DPoP-Nonce` header, not in the body.
    var dpopNonce: String?
    /// For invalid input: the first field at fault, and every field with its message.
    var field: String?
    var issues: [Issue]?
    var status: Int

    struct Issue: Encodable {
        var field: String
        var message: String
    }

    enum CodingKeys: String, CodingKey {
        case error, reason, lockedUntil, permanent, retryAfter, field, issues
        case errorDescription = "error_description"
    }

    init(_ error: BrokerError) {
        self.error = error.code.rawValue
        self.errorDescription = error.message
        self.reason = error.reasonIsPublic ? error.reason : nil
        self.lockedUntil = error.lockedUntil
        self.permanent = error.permanent ? true : nil
        self.retryAfter = error.retryAfter
        self.dpopNonce = error.dpopNonce
        self.status = error.httpStatus
        if !error.issues.isEmpty {
            self.field = error.issues[0].path
            self.issues = error.issues.map { Issue(field: $0.path, message: $0.message) }
        }
    }

    init(code: String, description: String) {
        self.error = code
        self.errorDescription = description
        self.status = 500
    }

    func response(status override: HTTPResponse.Status? = nil) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = "no-store"
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if let dpopNonce { headers[AccessTokenAuthentication.dpopNonceHeader] = dpopNonce }
        if override?.code == 401 || status == 401 { headers[.wwwAuthenticate] = #"Basic realm="gatehouse""# }
        let data = (try? JSONCoding.encoder.encode(self)) ?? Data(#"{"error":"server_error"}"#.utf8)
        return Response(status: override ?? HTTPResponse.Status(code: status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// The JSON settings of every body the server writes: RFC 3339 dates, stable key order.
enum JSONCoding {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()
}
