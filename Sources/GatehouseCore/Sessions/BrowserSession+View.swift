import Foundation

extension BrowserSession {
    /// What the person's and the admins' session lists show: never the cookie digest.
    public var json: JSONValue {
        let time = ISO8601DateFormatter()
        var object: [String: JSONValue] = [
            "id": .string(id), "createdAt": .string(time.string(from: createdAt)), "lastSeenAt": .string(time.string(from: lastSeenAt)),
            "authTime": .string(time.string(from: authTime)),
            "expiresAt": .string(time.string(from: expiresAt)), "providers": .array(providers.map(JSONValue.string)), "factors": .array(factors.map(JSONValue.string)),
            "apps": .array(appIDs.map(JSONValue.string)),
        ]
        if let clientIP { object["clientIP"] = .string(clientIP) }
        if let userAgent { object["userAgent"] = .string(userAgent) }
        return .object(object)
    }
}

extension ConsentBook.Grant {
    public var json: JSONValue {
        .object(["app": .string(appID), "scopes": .array(scopes.map(JSONValue.string)), "grantedAt": .string(ISO8601DateFormatter().string(from: grantedAt))])
    }
}
