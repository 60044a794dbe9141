import Foundation

/// Writes secrets to files only their owner may read: into a new file created 0600 in one step (never
/// readable by anyone else, not even for a moment), flushed to disk, then renamed over the old one, so
/// that a crash leaves the old file or the new one, never half of one, and an old file's looser
/// permissions never apply.
enum OwnerOnlyFile {
    static func write(_ data: Data, to file: URL) throws {
        let folder = file.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = folder.appendingPathComponent(".\(file.lastPathComponent).\(UUID().uuidString)")
        // O_EXCL and O_NOFOLLOW: a file or link someone planted under the name is never written through.
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw GatehouseError.transport("cannot create \(temporary.path): errno \(errno)") }
        do {
            try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
                var offset = 0
                while offset < buffer.count {
                    let written = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw GatehouseError.transport("cannot write \(temporary.path): errno \(errno)")
                    }
                    offset += written
                }
            }
            guard fsync(descriptor) == 0 else { throw GatehouseError.transport("cannot flush \(temporary.path): errno \(errno)") }
        } catch {
            close(descriptor)
            unlink(temporary.path)
            throw error
        }
        close(descriptor)
        guard rename(temporary.path, file.path) == 0 else {
            let failure = errno
            unlink(temporary.path)
            throw GatehouseError.transport("cannot replace \(file.path): errno \(failure)")
        }
    }
}
