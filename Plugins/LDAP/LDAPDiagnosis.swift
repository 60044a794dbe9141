import GatehousePluginKit
import GatehouseSupport

/// `gatehouse providers test` for an `ldap` provider: each step of a sign-in on one fresh connection,
/// stopping at the first that fails, with what the directory said.
struct LDAPDiagnosis: Sendable {
    let directory: LDAPDirectory
    let pool: LDAPConnectionPool

    private var config: LDAPConfig { directory.config }

    func run(username: String?, password: String?) async -> [DiagnosticStep] {
        var steps: [DiagnosticStep] = []
        let urls = config.urls.joined(separator: " ")
        let connection: LDAPConnection
        do {
            connection = try await pool.openUnpooled()
        } catch {
            if error.stage == .tls { steps.append(DiagnosticStep(name: "connect", passed: true, detail: "reached \(urls)")) }
            return steps + [DiagnosticStep(name: error.stage.rawValue, passed: false, detail: error.message)]
        }
        steps.append(DiagnosticStep(name: "connect", passed: true, detail: "connected to \(urls)"))
        let tls = config.startTLS || config.urls.contains { $0.lowercased().hasPrefix("ldaps://") }
        let tlsDetail =
            !tls
            ? "not used: passwords cross the network in the clear"
            : config.insecureSkipVerify ? "encrypted, but the certificate is NOT verified (insecureSkipVerify)" : "encrypted, certificate verified"
        steps.append(DiagnosticStep(name: "tls", passed: true, detail: tlsDetail))

        let directory = directory
        let serviceDN = config.bindDN
        let (serviceBind, _) = await step("service bind") { () throws(LDAPFailure) in
            try directory.bindService(connection)
            return ((), serviceDN.map { "bound as \($0)" } ?? "anonymous (no bindDN configured)")
        }
        steps.append(serviceBind)
        guard serviceBind.passed else { return steps }

        guard let username else {
            let (search, _) = await step("search") { () throws(LDAPFailure) in
                try directory.probe(connection)
                return ((), "the user search base \(directory.config.userSearch.baseDN) is readable")
            }
            return steps + [search]
        }
        let (search, found) = await step("search") { () throws(LDAPFailure) in
            let userSearch = directory.config.userSearch
            guard let filter = directory.userFilter(username: username) else {
                throw LDAPFailure(stage: .search, code: 0, message: "'\(username)' names another domain than \(directory.config.expectedDomain ?? "this one")")
            }
            let searched = "\(filter) under \(userSearch.baseDN)"
            switch try directory.lookUp(connection, username: username) {
            case .found(let entry):
                return (entry, "found \(entry.dn)")
            case .none:
                throw LDAPFailure(stage: .search, code: 0, message: "no entry (with a DN) matches \(searched)")
            case .ambiguous:
                throw LDAPFailure(stage: .search, code: 0, message: "several entries match \(searched)")
            case .locked(let entry):
                throw LDAPFailure(
                    stage: .search, code: 0, message: "found \(entry.dn), but it matches lockedFilter \(userSearch.lockedFilter ?? ""): sign-ins are refused")
            }
        }
        steps.append(search)
        guard let entry = found else { return steps }

        if let password {
            let (bind, _) = await step("bind") { () throws(LDAPFailure) in
                guard !password.isEmpty else { throw LDAPFailure(stage: .bind, code: 0, message: "an empty password is never sent to the directory") }
                switch try directory.bind(connection, entry: entry, password: password) {
                case .accepted: return ((), "bound as \(entry.dn)")
                case .refused(let reason): throw LDAPFailure(stage: .bind, code: 0, message: "the directory refused the password (\(reason))")
                case .restricted(let restriction):
                    throw LDAPFailure(stage: .bind, code: 0, message: "the password is right, but Active Directory refuses the sign-in (\(restriction.rawValue))")
                }
            }
            steps.append(bind)
            guard bind.passed else { return steps }
        }
        if config.groupSearch != nil {
            let (groups, _) = await step("groups") { () throws(LDAPFailure) in
                let groups = try directory.groups(connection, of: entry)
                return ((), groups.isEmpty ? "member of no group" : "member of \(groups.joined(separator: ", "))")
            }
            steps.append(groups)
        }
        return steps
    }

    /// Runs one blocking step off the server's threads and reports it.
    private func step<T: Sendable>(_ name: String, _ body: @escaping @Sendable () throws(LDAPFailure) -> (T, String)) async -> (DiagnosticStep, T?) {
        do {
            let (value, detail) = try await BlockingWork.run { try body() }
            return (DiagnosticStep(name: name, passed: true, detail: detail), value)
        } catch let failure as LDAPFailure {
            return (DiagnosticStep(name: name, passed: false, detail: failure.message), nil)
        } catch {
            return (DiagnosticStep(name: name, passed: false, detail: "\(error)"), nil)
        }
    }
}
