import CLDAP
import Foundation
import GatehousePluginKit
import GatehouseSupport
#if canImport(Glibc)
import Glibc
#endif

/// Something the directory (or the way to it) did wrong, with the step where it happened.
struct LDAPFailure: Error, Sendable, CustomStringConvertible {
    enum Stage: String, Sendable {
        case connect
        case tls
        case serviceBind = "service bind"
        case search
        case bind
        case groups
        case passwordChange = "password change"
    }

    var stage: Stage
    /// The LDAP result code (RFC 4511), or one of libldap's negative client codes.
    var code: Int32
    var message: String

    /// Whether the connection is of no further use (down, timed out, refused): it is thrown away and the
    /// directory counts as unreachable, as opposed to an answer the directory gave.
    var connectionLost: Bool {
        // libldap's own (negative) codes mean the handle is unusable; busy and unavailable come from a
        // directory that cannot serve.
        code < 0 || [LDAPResultCode.busy, LDAPResultCode.unavailable].contains(code)
    }

    var description: String { "\(stage.rawValue): \(message) (LDAP result \(code))" }
}

/// The result codes the plugin tells apart. Written out because libldap's macros for negative codes do
/// not all import into Swift.
enum LDAPResultCode {
    static let success: Int32 = 0
    static let timeLimitExceeded: Int32 = 3
    static let sizeLimitExceeded: Int32 = 4
    static let adminLimitExceeded: Int32 = 11
    static let constraintViolation: Int32 = 19
    static let noSuchObject: Int32 = 32
    static let invalidCredentials: Int32 = 49
    static let insufficientAccessRights: Int32 = 50
    static let busy: Int32 = 51
    static let unavailable: Int32 = 52
    static let unwillingToPerform: Int32 = 53
    static let serverDown: Int32 = -1
    static let timeout: Int32 = -5
    static let connectError: Int32 = -11
}

/// One entry a search returned: its DN and the values of the attributes asked for, by the names asked.
struct LDAPEntry: Sendable {
    var dn: String
    var attributes: [String: [String]]

    /// The first value of an attribute; `DN` names the entry's DN. Names are case-insensitive.
    func first(_ attribute: String) -> String? {
        values(attribute).first
    }

    func values(_ attribute: String) -> [String] {
        attribute.caseInsensitiveCompare("DN") == .orderedSame ? [dn] : attributes[attribute.lowercased()] ?? []
    }
}

/// How deep one search goes (RFC 4511 section 4.5.1.2).
enum SearchScope: Int32, Sendable {
    case base = 0
    case one = 1
    case sub = 2

    init(_ scope: LDAPScope) {
        self = scope == .one ? .one : .sub
    }
}

/// The settings every connection of one provider is opened with.
struct LDAPConnectionSettings: Sendable {
    var urls: [String]
    var startTLS: Bool
    var rootCA: String?
    var insecureSkipVerify: Bool
    var connectTimeout: Int
    var operationTimeout: Int
}

/// One open libldap handle. Its calls block, so they run on `BlockingWork` threads; the pool hands a
/// connection to one caller at a time, which is what makes the unchecked `Sendable` sound.
final class LDAPConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    private let operationTimeout: Int
    /// When the connection was last given back to the pool; long-idle connections are not reused.
    var lastUsed = Date()
    /// Who the connection is bound as (`""`: anonymous, nil: unknown after a failed bind), so the service account is bound again only after a user bind.
    var boundDN: String? = ""

    private init(handle: OpaquePointer, operationTimeout: Int) {
        self.handle = handle
        self.operationTimeout = operationTimeout
    }

    deinit {
        ldap_unbind_ext_s(handle, nil, nil)
    }

    /// Connects to the first URL that answers and, if asked, upgrades the connection with StartTLS.
    static func open(_ settings: LDAPConnectionSettings) throws(LDAPFailure) -> LDAPConnection {
        var handle: OpaquePointer?
        // libldap takes a space-separated list and tries each URL in turn: that is the fail-over.
        var rc = ldap_initialize(&handle, settings.urls.joined(separator: " "))
        guard rc == LDAPResultCode.success, let handle else {
            throw LDAPFailure(stage: .connect, code: rc, message: "cannot use the URL: \(errorString(rc))")
        }
        let connection = LDAPConnection(handle: handle, operationTimeout: settings.operationTimeout)
        var version: Int32 = 3
        ldap_set_option(handle, LDAP_OPT_PROTOCOL_VERSION, &version)
        // Referrals would send the service credentials to servers nobody configured.
        ldap_set_option(handle, LDAP_OPT_REFERRALS, nil)
        var connectTimeout = timeval(tv_sec: settings.connectTimeout, tv_usec: 0)
        ldap_set_option(handle, LDAP_OPT_NETWORK_TIMEOUT, &connectTimeout)
        // Bounds the calls that have no asynchronous form (StartTLS).
        var operationTimeout = timeval(tv_sec: settings.operationTimeout, tv_usec: 0)
        ldap_set_option(handle, LDAP_OPT_TIMEOUT, &operationTimeout)
        var requireCertificate: Int32 = settings.insecureSkipVerify ? LDAP_OPT_X_TLS_NEVER : LDAP_OPT_X_TLS_DEMAND
        ldap_set_option(handle, LDAP_OPT_X_TLS_REQUIRE_CERT, &requireCertificate)
        if let rootCA = settings.rootCA {
            rootCA.withCString { _ = ldap_set_option(handle, LDAP_OPT_X_TLS_CACERTFILE, $0) }
        }
        var isServer: Int32 = 0
        ldap_set_option(handle, LDAP_OPT_X_TLS_NEWCTX, &isServer)
        // TCP keepalive notices a connection a firewall dropped while it sat in the pool.
        var idle: Int32 = 30, probes: Int32 = 3, interval: Int32 = 10
        ldap_set_option(handle, LDAP_OPT_X_KEEPALIVE_IDLE, &idle)
        ldap_set_option(handle, LDAP_OPT_X_KEEPALIVE_PROBES, &probes)
        ldap_set_option(handle, LDAP_OPT_X_KEEPALIVE_INTERVAL, &interval)

        rc = ldap_connect(handle)
        guard rc == LDAPResultCode.success else {
            // With ldaps:// the handshake is part of connecting: libldap's message tells which part failed.
            let message = connection.diagnostic(rc)
            if ["tls", "ssl", "certificate"].contains(where: { message.lowercased().contains($0) }),
                settings.urls.contains(where: { $0.lowercased().hasPrefix("ldaps://") })
            {
                throw LDAPFailure(stage: .tls, code: rc, message: message)
            }
            // libldap often says only "Can't contact LDAP server" when an ldaps:// handshake failed: a
            // port that accepts TCP tells the two apart, so the administrator looks at the right thing.
            if let reachable = settings.urls.first(where: {
                $0.lowercased().hasPrefix("ldaps://") && TCPProbe.accepts($0, defaultPort: 636, timeout: settings.connectTimeout)
            }) {
                throw LDAPFailure(
                    stage: .tls, code: rc,
                    message:
                        "\(message): \(reachable) accepts connections but the TLS handshake failed (is rootCA the CA of the directory's certificate, and does the certificate name the host in the URL?)"
                )
            }
            throw LDAPFailure(stage: .connect, code: rc, message: message)
        }
        if settings.startTLS {
            rc = ldap_start_tls_s(handle, nil, nil)
            guard rc == LDAPResultCode.success else {
                throw LDAPFailure(stage: .tls, code: rc, message: connection.diagnostic(rc))
            }
        }
        return connection
    }

    /// A simple bind. Answers with the directory's result code and message; throws only when the
    /// connection failed or timed out.
    func bind(dn: String, password: String, stage: LDAPFailure.Stage) throws(LDAPFailure) -> (code: Int32, message: String) {
        boundDN = nil
        var messageID: Int32 = 0
        var secret = Array(password.utf8)
        var rc = dn.withCString { dnPointer in
            secret.withUnsafeMutableBufferPointer { bytes in
                // The length is the password's own byte count, never strlen: a NUL inside must not
                // shorten it (an empty password makes the bind unauthenticated).
                var credentials = berval(
                    bv_len: ber_len_t(bytes.count), bv_val: bytes.baseAddress.map { UnsafeMutableRawPointer($0).assumingMemoryBound(to: CChar.self) })
                // A nil mechanism is LDAP_SASL_SIMPLE, a macro Swift does not import.
                return ldap_sasl_bind(handle, dnPointer, nil, &credentials, nil, nil, &messageID)
            }
        }
        guard rc == LDAPResultCode.success else { throw LDAPFailure(stage: stage, code: rc, message: diagnostic(rc)) }
        let result = try awaitResult(messageID, stage: stage)
        defer { ldap_msgfree(result) }
        let (code, message) = parse(result)
        rc = code
        if rc == LDAPResultCode.success { boundDN = dn }
        // A directory too busy to answer is not a verdict on the password.
        let failure = LDAPFailure(stage: stage, code: rc, message: message)
        if failure.connectionLost { throw failure }
        return (rc, message)
    }

    /// Active Directory's password change (not a reset): one modify of `unicodePwd` that deletes the
    /// current password and adds the new one, each as the UTF-16LE of the quoted password. The
    /// directory checks the current password and its password policy; any account may ask for it
    /// (AD grants "Change Password" to everyone). Answers with the result code and message; throws
    /// only when the connection failed or timed out.
    func changeActiveDirectoryPassword(dn: String, current: String, new: String) throws(LDAPFailure) -> (code: Int32, message: String) {
        func quotedUTF16(_ password: String) -> [UInt8] {
            Array("\"\(password)\"".utf16).flatMap { [UInt8($0 & 0xff), UInt8($0 >> 8)] }
        }
        var old = quotedUTF16(current)
        var replacement = quotedUTF16(new)
        defer {
            // The buffers held passwords: not left behind in freed memory.
            for index in old.indices { old[index] = 0 }
            for index in replacement.indices { replacement[index] = 0 }
        }
        var messageID: Int32 = 0
        let rc = old.withUnsafeMutableBufferPointer { oldBytes in
            replacement.withUnsafeMutableBufferPointer { newBytes in
                var oldValue = berval(bv_len: ber_len_t(oldBytes.count), bv_val: UnsafeMutableRawPointer(oldBytes.baseAddress!).assumingMemoryBound(to: CChar.self))
                var newValue = berval(bv_len: ber_len_t(newBytes.count), bv_val: UnsafeMutableRawPointer(newBytes.baseAddress!).assumingMemoryBound(to: CChar.self))
                return withUnsafeMutablePointer(to: &oldValue) { oldPointer in
                    withUnsafeMutablePointer(to: &newValue) { newPointer in
                        var oldValues: [UnsafeMutablePointer<berval>?] = [oldPointer, nil]
                        var newValues: [UnsafeMutablePointer<berval>?] = [newPointer, nil]
                        return "unicodePwd".withCString { attribute in
                            let name = UnsafeMutablePointer(mutating: attribute)
                            return oldValues.withUnsafeMutableBufferPointer { oldList in
                                newValues.withUnsafeMutableBufferPointer { newList in
                                    var delete = LDAPMod()
                                    delete.mod_op = LDAP_MOD_DELETE | LDAP_MOD_BVALUES
                                    delete.mod_type = name
                                    delete.mod_vals.modv_bvals = oldList.baseAddress
                                    var add = LDAPMod()
                                    add.mod_op = LDAP_MOD_ADD | LDAP_MOD_BVALUES
                                    add.mod_type = name
                                    add.mod_vals.modv_bvals = newList.baseAddress
                                    return withUnsafeMutablePointer(to: &delete) { deletePointer in
                                        withUnsafeMutablePointer(to: &add) { addPointer in
                                            var mods: [UnsafeMutablePointer<LDAPMod>?] = [deletePointer, addPointer, nil]
                                            return mods.withUnsafeMutableBufferPointer { list in
                                                ldap_modify_ext(handle, dn, list.baseAddress, nil, nil, &messageID)
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        guard rc == LDAPResultCode.success else { throw LDAPFailure(stage: .passwordChange, code: rc, message: diagnostic(rc)) }
        let result = try awaitResult(messageID, stage: .passwordChange)
        defer { ldap_msgfree(result) }
        let (code, message) = parse(result)
        let failure = LDAPFailure(stage: .passwordChange, code: code, message: message)
        if failure.connectionLost { throw failure }
        return (code, message)
    }

    /// Searches and collects the entries with the attributes asked for. `sizeLimit` 0 means no limit;
    /// a search that hits the limit still answers with the entries it got (`limited` is true).
    /// `timeLimit`: for a search that may be slow (an administrator's substring search), the seconds
    /// the directory may take, under the operation timeout so that it answers (what it found so far)
    /// before the connection is given up; its running out, or the directory's own limits, then read
    /// as "limited", not as a lost connection.
    func search(
        base: String, scope: SearchScope, filter: String, attributes: [String], formats: [String: LDAPValueFormat] = [:], sizeLimit: Int32, stage: LDAPFailure.Stage,
        timeLimit: Int? = nil
    ) throws(LDAPFailure) -> (entries: [LDAPEntry], limited: Bool) {
        var messageID: Int32 = 0
        let attributeNames = attributes.filter { $0.caseInsensitiveCompare("DN") != .orderedSame }
        // `1.1` asks for no attributes (RFC 4511 section 4.5.1.8).
        let requested = attributeNames.isEmpty ? ["1.1"] : attributeNames
        var cStrings: [UnsafeMutablePointer<CChar>?] = requested.map { strdup($0) } + [nil]
        defer { cStrings.forEach { free($0) } }
        var serverTimeLimit = timeval(tv_sec: timeLimit.map { time_t($0) } ?? operationTimeout, tv_usec: 0)
        let rc = cStrings.withUnsafeMutableBufferPointer { names in
            ldap_search_ext(handle, base, scope.rawValue, filter, names.baseAddress, 0, nil, nil, &serverTimeLimit, sizeLimit, &messageID)
        }
        guard rc == LDAPResultCode.success else { throw LDAPFailure(stage: stage, code: rc, message: diagnostic(rc)) }
        let result = try awaitResult(messageID, stage: stage)
        defer { ldap_msgfree(result) }

        var entries: [LDAPEntry] = []
        var entry = ldap_first_entry(handle, result)
        while let current = entry {
            var dn = ""
            if let dnPointer = ldap_get_dn(handle, current) {
                dn = String(cString: dnPointer)
                ldap_memfree(dnPointer)
            }
            var values: [String: [String]] = [:]
            for name in attributeNames {
                values[name.lowercased()] = readValues(current, attribute: name, format: formats[name.lowercased()] ?? .text)
            }
            entries.append(LDAPEntry(dn: dn, attributes: values))
            entry = ldap_next_entry(handle, current)
        }
        let (code, message) = parse(result)
        switch code {
        case LDAPResultCode.success: return (entries, false)
        case LDAPResultCode.sizeLimitExceeded: return (entries, true)
        case LDAPResultCode.timeLimitExceeded where timeLimit != nil, LDAPResultCode.adminLimitExceeded where timeLimit != nil: return (entries, true)
        case LDAPResultCode.noSuchObject: throw LDAPFailure(stage: stage, code: code, message: "the base DN '\(base)' does not exist")
        default: throw LDAPFailure(stage: stage, code: code, message: message)
        }
    }

    /// Waits for the whole answer to one request, at most the operation timeout. A request that times
    /// out is abandoned; the caller throws the connection away.
    private func awaitResult(_ messageID: Int32, stage: LDAPFailure.Stage) throws(LDAPFailure) -> OpaquePointer {
        var timeout = timeval(tv_sec: operationTimeout, tv_usec: 0)
        var result: OpaquePointer?
        let rc = ldap_result(handle, messageID, 1, &timeout, &result)
        switch rc {
        case 0:
            ldap_abandon_ext(handle, messageID, nil, nil)
            throw LDAPFailure(stage: stage, code: LDAPResultCode.timeout, message: "the directory did not answer within \(operationTimeout) s")
        case -1:
            var code: Int32 = LDAPResultCode.serverDown
            ldap_get_option(handle, LDAP_OPT_RESULT_CODE, &code)
            throw LDAPFailure(stage: stage, code: code, message: diagnostic(code))
        default:
            guard let result else { throw LDAPFailure(stage: stage, code: LDAPResultCode.serverDown, message: "no answer") }
            return result
        }
    }

    private func parse(_ result: OpaquePointer) -> (Int32, String) {
        var code: Int32 = 0
        var message: UnsafeMutablePointer<CChar>?
        let rc = ldap_parse_result(handle, result, &code, nil, &message, nil, nil, 0)
        defer { if let message { ldap_memfree(message) } }
        guard rc == LDAPResultCode.success else { return (rc, Self.errorString(rc)) }
        let text = message.map { String(cString: $0) } ?? ""
        return (code, text.isEmpty ? Self.errorString(code) : "\(Self.errorString(code)): \(text)")
    }

    private func readValues(_ entry: OpaquePointer, attribute: String, format: LDAPValueFormat) -> [String] {
        guard let values = ldap_get_values_len(handle, entry, attribute) else { return [] }
        defer { ldap_value_free_len(values) }
        var result: [String] = []
        var index = 0
        while let value = values[index] {
            // Binary attributes (Active Directory's objectGUID) always become the same text, whatever their
            // bytes, so the same value always has the same text; `LDAPFilter` turns it back into bytes.
            result.append(format.text(Data(bytes: value.pointee.bv_val, count: Int(value.pointee.bv_len))))
            index += 1
        }
        return result
    }

    /// libldap's text for a code plus the diagnostic message it kept (e.g. the TLS error).
    private func diagnostic(_ code: Int32) -> String {
        var pointer: UnsafeMutablePointer<CChar>?
        ldap_get_option(handle, LDAP_OPT_DIAGNOSTIC_MESSAGE, &pointer)
        defer { if let pointer { ldap_memfree(pointer) } }
        let detail = pointer.map { String(cString: $0) } ?? ""
        return detail.isEmpty ? Self.errorString(code) : "\(Self.errorString(code)): \(detail)"
    }

    static func errorString(_ code: Int32) -> String {
        ldap_err2string(code).map { String(cString: $0) } ?? "LDAP error \(code)"
    }
}
