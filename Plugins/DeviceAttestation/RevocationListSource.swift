import Foundation
import GatehousePluginKit
import GatehouseSupport
import Logging
import Synchronization

/// Google's attestation status list as this node knows it: read from the configured file at start,
/// fetched again from the configured URL once the copy is older than the refresh interval. A failed
/// fetch keeps the last good copy (and is logged); with no copy at all, key attestation is refused as
/// unavailable rather than passing unchecked.
final class RevocationListSource: Sendable {
    private struct Copy: Sendable {
        var list: RevocationStatusList?
        var fetchedAt: Date?
    }

    let settings: DeviceAttestationPlugin.RevocationListSettings
    let http: any OutboundHTTP
    let clock: any BrokerClock
    let logger: Logger
    private let copy: Mutex<Copy>
    private let fetches = SharedResult<Void>(lifetime: 0)

    init(settings: DeviceAttestationPlugin.RevocationListSettings, http: any OutboundHTTP, clock: any BrokerClock, logger: Logger) throws {
        self.settings = settings
        self.http = http
        self.clock = clock
        self.logger = logger
        var initial = Copy()
        if let file = settings.file {
            do {
                initial.list = try RevocationStatusList(json: try Data(contentsOf: URL(fileURLWithPath: file)))
            } catch {
                throw ConfigIssue(path: "revocationList.file", "'\(file)' is not an attestation status list ({\"entries\": {...}})")
            }
        }
        copy = Mutex(initial)
    }

    /// The list as this node knows it, fetched again first when stale (one fetch at a time: the
    /// registrations that find it stale together wait for the same one).
    func current() async throws -> RevocationStatusList {
        let now = clock.now
        let stale = copy.withLock { copy in copy.fetchedAt.map { now.timeIntervalSince($0) >= settings.refreshInterval.timeInterval } ?? true }
        if !settings.url.isEmpty, stale { await fetches.value { await self.fetch(at: now) } }
        guard let list = copy.withLock({ $0.list }) else {
            throw BrokerError(.providerUnavailable, .unavailable, "Google's attestation status list is not available yet; try again later.").publicly(
                because: "status_list_unavailable")
        }
        return list
    }

    /// Fetches the list; a failure keeps the last good copy and is tried again after a minute, not
    /// on every registration.
    private func fetch(at now: Date) async {
        do {
            let response = try await http.send(OutboundRequest(method: "GET", url: settings.url, timeout: 10, maxResponseBytes: 16 << 20))
            guard response.status == 200 else { throw RevocationStatusList.Malformed() }
            let fresh = try RevocationStatusList(json: response.body)
            copy.withLock { $0 = Copy(list: fresh, fetchedAt: now) }
        } catch {
            logger.warning("the attestation status list could not be refreshed", metadata: ["url": .string(settings.url), "error": .string("\(error)")])
            copy.withLock { $0.fetchedAt = now.addingTimeInterval(60 - settings.refreshInterval.timeInterval) }
        }
    }
}
