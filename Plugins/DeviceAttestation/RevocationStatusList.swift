import Foundation
import GatehousePluginKit
import GatehouseSupport

/// Google's attestation certificate status list (https://android.googleapis.com/attestation/status):
/// `{"entries": {"<serial, lowercase hex>": {"status": "REVOKED" | "SUSPENDED", "reason": ...}}}`.
/// A revoked or suspended serial anywhere in a chain refuses it.
struct RevocationStatusList: Sendable, Hashable {
    private var statuses: [String: String]

    init(statuses: [String: String] = [:]) {
        self.statuses = Dictionary(statuses.map { (Self.normalize($0.key), $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    struct Malformed: Error {}

    init(json: Data) throws {
        guard let object = try JSONSerialization.jsonObject(with: json) as? [String: Any], let entries = object["entries"] as? [String: Any] else { throw Malformed() }
        var statuses: [String: String] = [:]
        for (serial, entry) in entries {
            guard let entry = entry as? [String: Any], let status = entry["status"] as? String else { throw Malformed() }
            statuses[serial] = status
        }
        self.init(statuses: statuses)
    }

    var count: Int { statuses.count }

    /// The status of a certificate serial number (its INTEGER content bytes), or nil when listed as good.
    func status(of serial: [UInt8]) -> String? {
        statuses[Self.normalize(SecretDigest.hex(serial))]
    }

    static func normalize(_ hex: String) -> String {
        let trimmed = hex.lowercased().drop { $0 == "0" }
        return trimmed.isEmpty ? "0" : String(trimmed)
    }
}
