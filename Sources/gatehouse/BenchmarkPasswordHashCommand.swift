import ArgumentParser
import Dispatch
import Foundation
import HummingbirdBcrypt
import Synchronization

/// What the password hash alone allows on this machine: bcrypt verifications per second with every
/// core busy, the ceiling `bench/ceiling.sh` compares password sign-ins with. Hidden: a benchmark tool.
struct BenchmarkPasswordHashCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "benchmark-password-hash", abstract: "Print bcrypt verifications per second on every core.", shouldDisplay: false
    )

    @Option(name: .long, help: "bcrypt cost (4-31).")
    var cost: Int = 12

    @Option(name: .long, help: "How long to measure.")
    var seconds: Double = 3

    func validate() throws {
        guard (4...31).contains(cost) else { throw ValidationError("--cost must be between 4 and 31") }
        guard seconds > 0, seconds <= 600 else { throw ValidationError("--seconds must be between 0 and 600") }
    }

    func run() {
        let hash = Bcrypt.hash("benchmark password", cost: UInt8(cost))
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let total = Mutex(0)
        let started = DispatchTime.now().uptimeNanoseconds
        let deadline = started + UInt64(seconds * 1e9)
        DispatchQueue.concurrentPerform(iterations: cores) { _ in
            var done = 0
            while DispatchTime.now().uptimeNanoseconds < deadline {
                _ = Bcrypt.verify("benchmark password", hash: hash)
                done += 1
            }
            total.withLock { $0 += done }
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        print(String(format: "%.1f verifications/s (cost %d, %d cores, %.1f s)", Double(total.withLock { $0 }) / elapsed, cost, cores, elapsed))
    }
}
