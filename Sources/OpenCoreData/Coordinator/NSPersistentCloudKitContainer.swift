// NSPersistentCloudKitContainer as a local container: there is no CloudKit on Linux, so
// apps written for it port without edits and keep their data on this machine only.
// Its sync options are accepted and ignored; the first load (or schema initialization)
// says so in one line on standard error.
import Foundation

/// A container whose stores Core Data mirrors to CloudKit; here it is a local
/// ``NSPersistentContainer``: stores load and work as usual, nothing is synced.
///
/// ```swift
/// let container = NSPersistentCloudKitContainer(name: "CoreDataCloudKitDemo")
/// container.loadPersistentStores { _, error in /* ... */ }
/// ```
open class NSPersistentCloudKitContainer: NSPersistentContainer, @unchecked Sendable {
    /// Adds the stores as ``NSPersistentContainer`` does; CloudKit mirroring is unavailable,
    /// which the first call reports in one line on standard error.
    open override func loadPersistentStores(
        completionHandler block: @escaping (NSPersistentStoreDescription, Error?) -> Void
    ) {
        reportSyncUnavailable()
        super.loadPersistentStores(completionHandler: block)
    }

    /// Core Data creates the CloudKit schema for the model; here there is no CloudKit, so
    /// it reports that (once) and does nothing.
    ///
    /// - Parameter options: accepted and ignored.
    open func initializeCloudKitSchema(options: NSPersistentCloudKitContainerSchemaInitializationOptions = []) throws {
        reportSyncUnavailable()
    }

    private static let reportLock = NSLock()
    nonisolated(unsafe) private static var hasReported = false

    private func reportSyncUnavailable() {
        let first = Self.reportLock.withLock { () -> Bool in
            defer { Self.hasReported = true }
            return !Self.hasReported
        }
        guard first else { return }
        let identifiers = persistentStoreDescriptions.compactMap { $0.cloudKitContainerOptions?.containerIdentifier }
        let named = identifiers.isEmpty ? "" : " (containers \(identifiers.joined(separator: ", ")) ignored)"
        ModelFileLog.write(
            "NSPersistentCloudKitContainer '\(name)' runs as a local NSPersistentContainer: CloudKit sync is "
                + "unavailable on this platform, so stores are not mirrored\(named)")
    }
}

/// How a store is mirrored to CloudKit: accepted so apps port unchanged; nothing syncs here.
open class NSPersistentCloudKitContainerOptions: NSObject, @unchecked Sendable {
    /// The CloudKit container's identifier ("iCloud.com.example.app").
    public let containerIdentifier: String

    /// Options for the CloudKit container `containerIdentifier`.
    public init(containerIdentifier: String) {
        self.containerIdentifier = containerIdentifier
        super.init()
    }
}

/// Options of ``NSPersistentCloudKitContainer/initializeCloudKitSchema(options:)``.
public struct NSPersistentCloudKitContainerSchemaInitializationOptions: OptionSet, Sendable {
    /// The options' bits.
    public let rawValue: UInt
    /// Options from their bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Validate the schema without uploading it.
    public static let dryRun = NSPersistentCloudKitContainerSchemaInitializationOptions(rawValue: 1 << 1)
    /// Print the generated schema.
    public static let printSchema = NSPersistentCloudKitContainerSchemaInitializationOptions(rawValue: 1 << 2)
}
