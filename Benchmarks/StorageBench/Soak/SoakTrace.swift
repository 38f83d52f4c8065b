// A per-save trace for finding which save produced a violation: with SOAK_TRACE=DIR in
// the environment (child processes inherit it), every writer appends a line per save that
// reached the store to DIR/trace-WRITER-PID.txt:
//
//   TIME WRITER POLICY save ins=[...] upd=[...] del=[...]
//   TIME WRITER POLICY ack {effects} operations [...] owners [[key, item, ...], ...]
//   TIME WRITER POLICY fail COUNTER ERROR
//
// each object as ENTITY/KEY@ID (KEY its key or name when loaded, ID the last part of its
// object ID's URI), so an item that comes back can be followed by ID to the save that
// inserted its row again and the one that deleted it.
import Foundation
import OpenCoreData
import Synchronization

final class SoakTrace: Sendable {
    private let handle: FileHandle
    private let writer: String
    private let policy: String
    private let lock = Mutex(())

    /// A trace for `writer`, or nil when SOAK_TRACE is not set.
    init?(writer: String, policy: SoakPolicy) {
        guard let directory = ProcessInfo.processInfo.environment["SOAK_TRACE"], !directory.isEmpty else {
            return nil
        }
        let path = "\(directory)/trace-\(writer)-\(getpid()).txt"
        guard FileManager.default.createFile(atPath: path, contents: nil) else { return nil }
        guard let handle = FileHandle(forWritingAtPath: path) else { return nil }
        self.handle = handle
        self.writer = writer
        self.policy = policy.rawValue
    }

    /// Traces every save of `context` that reaches the store.
    func observe(_ context: NSManagedObjectContext) {
        _ = NotificationCenter.default.addObserver(
            forName: .NSManagedObjectContextDidSave, object: context, queue: nil
        ) { [self] notification in
            let info = notification.userInfo ?? [:]
            func list(_ key: String) -> String {
                let objects = (info[key] as? Set<NSManagedObject>) ?? []
                return objects.map(Self.describe).sorted().joined(separator: ",")
            }
            let line =
                String(format: "%.6f", Date().timeIntervalSince1970)
                + " \(writer) \(policy) save ins=[\(list(NSInsertedObjectsKey))] "
                + "upd=[\(list(NSUpdatedObjectsKey))] del=[\(list(NSDeletedObjectsKey))]\n"
            lock.withLock { _ in handle.write(Data(line.utf8)) }
        }
    }

    /// Notes a line (a writer's acknowledged effects, a failure).
    func note(_ text: String) {
        let line = String(format: "%.6f", Date().timeIntervalSince1970) + " \(writer) \(policy) \(text)\n"
        lock.withLock { _ in handle.write(Data(line.utf8)) }
    }

    private static func describe(_ object: NSManagedObject) -> String {
        let id = object.objectID.uriRepresentation().lastPathComponent
        let entity = object.objectID.entity.name ?? "?"
        guard !object.isFault else { return "\(entity)/-@\(id)" }
        let key: String
        switch object {
        case let item as SoakItem: key = "\(item.key)"
        case let owner as SoakOwner: key = "\(owner.key)"
        case let tag as SoakTag: key = tag.name ?? "nil"
        default: key = "-"
        }
        return "\(entity)/\(key)@\(id)"
    }
}
