import Foundation
import GatehouseCore
import Hummingbird

/// `/healthz` (the process is up), `/readyz` (the store and every provider answer) and `/oauth2/jwks`
/// (the public keys that verify the broker's tokens). `/readyz` is public, so it answers the status
/// only; which check failed and why goes to admins (`/admin/v1/readiness`) and the log.
struct OperationsAPI {
    let broker: Broker

    static let jwksCacheControl = "public, max-age=\(Int(SigningKeyring.jwksMaxAge))"

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.get("healthz") { _, _ in
            JSONBody(["status": "ok"]).response(status: .ok)
        }
        router.get("readyz") { _, _ in
            let readiness = await broker.readiness()
            return JSONBody(["status": readiness.status]).response(status: readiness.ready ? .ok : .serviceUnavailable)
        }
        router.get("oauth2/jwks") { _, _ in
            // Short enough that a rotated key reaches verifiers quickly; rotated-in keys wait longer
            // than this before they sign (SigningKeyring.activationDelay).
            Response(
                status: .ok,
                headers: [.contentType: "application/jwk-set+json", .cacheControl: Self.jwksCacheControl],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: broker.keyring.keySetJSON()))
            )
        }
    }

}

/// Any Encodable as a JSON answer.
struct JSONBody<Value: Encodable> {
    var value: Value
    init(_ value: Value) { self.value = value }

    func response(status: HTTPResponse.Status) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        let bytes: [UInt8]
        if let object = value as? [String: JSONValue] {
            bytes = JSONValue.object(object).serialized()
        } else {
            bytes = Array((try? JSONCoding.encoder.encode(value)) ?? Data("{}".utf8))
        }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
