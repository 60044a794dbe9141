import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Finds the key-encryption keys a config names: the text, or a key file that only its owner may
/// read. In development without any, a key file is created beside the database on first start (and
/// read on every later one); in production a missing key is a start-up error.
public enum KeyEncryptionSetup {
    /// The file development creates beside the database.
    public static func developmentKeyFile(for config: BrokerConfig) -> String {
        URL(fileURLWithPath: config.storage.sqlitePath).deletingLastPathComponent().appendingPathComponent("gatehouse.kek").path
    }

    /// The sealer for `config`; `create` lets development write its key file (check-config does not).
    public static func sealer(for config: BrokerConfig, create: Bool = true) throws(ConfigIssues) -> SecretSealer {
        let keys = config.keys
        var issues: [ConfigIssue] = []
        var current: KeyEncryptionKey?
        if let text = keys.encryptionKey {
            current = try? KeyEncryptionKey(text: text)
        } else if let file = keys.encryptionKeyFile {
            current = read(file, path: "keys.encryptionKeyFile", issues: &issues)
        } else if config.environment == .development {
            let file = developmentKeyFile(for: config)
            if !FileManager.default.fileExists(atPath: file), create {
                do {
                    try write(KeyEncryptionKey.generateText() + "\n", to: file)
                } catch {
                    issues.append(ConfigIssue(path: "keys.encryptionKeyFile", "cannot create the development key file '\(file)': \(error)"))
                }
            }
            if FileManager.default.fileExists(atPath: file) {
                current = read(file, path: "keys.encryptionKeyFile (development: \(file))", issues: &issues)
            } else if !create {
                // check-config: the file will be made at the first start.
                current = try? KeyEncryptionKey(text: KeyEncryptionKey.generateText())
            }
        } else {
            issues.append(
                ConfigIssue(
                    path: "keys.encryptionKey",
                    "is required outside development: the key that encrypts the stored signing keys and secrets (`encryptionKey: ${GATEHOUSE_KEK}` with a value from `openssl rand -base64 32`, or encryptionKeyFile)"
                )
            )
        }
        var previous = keys.previousEncryptionKeys.compactMap { try? KeyEncryptionKey(text: $0) }
        for (index, file) in keys.previousEncryptionKeyFiles.enumerated() {
            if let key = read(file, path: "keys.previousEncryptionKeyFiles[\(index)]", issues: &issues) { previous.append(key) }
        }
        guard issues.isEmpty, let current else { throw ConfigIssues(issues) }
        return SecretSealer(current: current, previous: previous)
    }

    /// Reads a key file, refusing one that its group or others may read, that a user other than the
    /// broker's (or root) owns, that is not a regular file, or that is not a key. The checks and the
    /// read use one open descriptor, so the file cannot be swapped in between; a symbolic link (how
    /// Kubernetes mounts secrets) is checked as the file it names.
    static func read(_ file: String, path: String, issues: inout [ConfigIssue]) -> KeyEncryptionKey? {
        // Non-blocking: a FIFO in the key's place must not hang the start (it is refused below).
        let descriptor = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            issues.append(ConfigIssue(path: path, "cannot read '\(file)': \(String(cString: strerror(errno)))"))
            return nil
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            issues.append(ConfigIssue(path: path, "'\(file)' is not a regular file"))
            return nil
        }
        let mode = status.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            issues.append(ConfigIssue(path: path, "'\(file)' may be read by its group or others (mode \(String(mode, radix: 8))); `chmod 600 \(file)`"))
            return nil
        }
        guard status.st_uid == geteuid() || status.st_uid == 0 else {
            issues.append(ConfigIssue(path: path, "'\(file)' belongs to another user (uid \(status.st_uid)); the broker's user (or root) must own its key file"))
            return nil
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = Glibc.read(descriptor, &buffer, buffer.count)
            guard count > 0 else { break }
            data.append(contentsOf: buffer[0..<count])
            if data.count > 1024 { break }
        }
        do {
            return data.count == 32 ? try KeyEncryptionKey(bytes: data) : try KeyEncryptionKey(text: String(decoding: data, as: UTF8.self))
        } catch {
            issues.append(ConfigIssue(path: path, "'\(file)' \(error.description)"))
            return nil
        }
    }

    /// Creates a file only its owner may read or write, refusing to overwrite one.
    static func write(_ text: String, to file: String) throws {
        try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: file).deletingLastPathComponent().path, withIntermediateDirectories: true)
        let descriptor = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        guard Glibc.write(descriptor, bytes, bytes.count) == bytes.count else { throw POSIXError(.EIO) }
        fsync(descriptor)
    }
}
