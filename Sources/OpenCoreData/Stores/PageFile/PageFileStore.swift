// The default on-disk store: rows of every entity in trees of the storage engine
// (SPEC.md §3). One engine tree per concrete entity keyed by primary key, one tree per
// secondary or unique index, and a metadata tree. The class adapts the store protocol to
// three values over one engine transaction: PageFileCatalog (each entity's trees),
// PageFileRowReader (rows by key, for faults and fetches) and PageFileWriter (every row
// change: a context save is one write transaction of writer steps, so rows, index
// entries, blobs, join entries and history commit together or not at all).
import Foundation
import StorageEngine

/// The default persistent store on the storage engine (`NSSQLiteStoreType`, and the type
/// of a store description with no type set).
///
/// ```swift
/// let description = NSPersistentStoreDescription(url: URL(fileURLWithPath: "/var/lib/app/Model.store"))
/// container.persistentStoreDescriptions = [description]
/// container.loadPersistentStores { _, error in if let error { print(error) } }
/// ```
public final class PageFileStore: NSPersistentStore, @unchecked Sendable {
    /// Lists decided by inverse to-ones follow them (reference indexes here, the
    /// integrity pass in the in-memory stores).
    override var listsFollowInverseToOnes: Bool { true }

    static let metaTreeName = "store.meta"
    static let metadataKey = Array("metadata".utf8)
    static let nextKeyKey = Array("next-key".utf8)
    static let catalogKey = Array("index-catalog".utf8)
    static let metadataFormatVersion: UInt8 = PageFileRowCodec.formatVersion

    var database: Database?
    /// The engine handle this store shares with the process's other stores on the file.
    private var shared: PageFileSharedDatabase?
    /// Posts other processes' saves (PageFileRemoteChangeWatcher.swift), when asked for.
    private var remoteChangeWatcher: PageFileRemoteChangeWatcher?
    /// The trees of the model's entities (empty until the store is loaded).
    var catalog = PageFileCatalog()
    /// The next primary key this process hands out; setting it raises it (it never goes back).
    var nextKey: Int64 {
        get { shared?.peekNextKey ?? 1 }
        set { shared?.noteStoredNextKey(newValue) }
    }
    private var metadataChanged = false

    /// `NSSQLiteStoreType`: the type ported apps name for the default on-disk store.
    public override var type: String { NSSQLiteStoreType }

    /// The store's metadata; a change is written with the next save.
    public override var metadata: [String: Any]! {
        didSet { metadataChanged = true }
    }

    // MARK: Opening

    /// Opens or creates the store file; checks the model against the stored version hashes.
    ///
    /// With `NSReadOnlyPersistentStoreOption` the file is opened read-only (SPEC.md
    /// §2.12): nothing is created or written, so a store on a read-only file system or in
    /// a directory the process may not write opens, and a store that needs migrating is
    /// refused with 134100. With ``PageFileStoreRecoverToOlderStateOption`` a file whose
    /// newest meta slot is damaged opens at its previous checkpoint (§2.1 M4).
    ///
    /// - Throws: 134100 for an incompatible model, 259 for a damaged file, 134000 for a file
    ///   that is not a store, 134090 when another handle holds it past the timeout, 260
    ///   for a read-only store with no file, 134080 when the file cannot be opened (for
    ///   writing: the message says to add the store read-only).
    public override func loadMetadata() throws {
        guard let model = persistentStoreCoordinator?.managedObjectModel else {
            throw CoreDataError.make(NSPersistentStoreOpenError, "the store has no coordinator and so no model")
        }
        guard let url, url.isFileURL else {
            throw CoreDataError.make(
                NSPersistentStoreOpenError, "the default store needs a file URL (use NSInMemoryStoreType for none)")
        }
        // /dev/null: a database in memory, as Core Data's SQLite store makes one there.
        let isInMemory = url.path == "/dev/null"
        catalog = PageFileCatalog(model: model, path: url.path)
        _ = codec  // made now, before reads on other threads can ask for it
        var engineOptions = Database.Options()
        if let durability = options?[PageFileStoreDurabilityOption] as? String,
            let mode = Database.Durability(rawValue: durability)
        {
            engineOptions.durability = mode
        }
        engineOptions.cacheSize = try PageFileStore.cacheSize(options?[PageFileStoreCacheSizeOption])
        engineOptions.readOnly = isReadOnly
        engineOptions.multiProcess = !isReadOnly && PageFileStore.flag(options?[PageFileStoreMultiProcessOption])
        engineOptions.recoverToOlderState = PageFileStore.flag(options?[PageFileStoreRecoverToOlderStateOption])
        if let custom = options?[storeFileSystemOption] as? any StorageFileSystem { engineOptions.fileSystem = custom }
        if isReadOnly, !engineOptions.fileSystem.fileExists(atPath: url.path) {
            throw CoreDataError.make(
                NSFileReadNoSuchFileError,
                "there is no store at \(url.path): a store added with NSReadOnlyPersistentStoreOption is not "
                    + "created; check the URL", userInfo: [NSFilePathErrorKey: url.path])
        }
        let timeout = (options?[NSPersistentStoreTimeoutOption] as? NSNumber)?.doubleValue ?? 5
        // Core Data's lock timeout: also how long a save waits for another process's writer.
        engineOptions.busyTimeout = timeout
        var migrated = false
        while true {
            let shared: PageFileSharedDatabase
            do {
                shared =
                    isInMemory
                    ? try PageFileSharedDatabase.inMemory(options: engineOptions)
                    : try PageFileSharedDatabase.acquire(url, options: engineOptions, timeout: timeout)
            } catch {
                throw PageFileStore.translate(error, opening: url)
            }
            let database = shared.database
            self.shared = shared
            do {
                var stored = try PageFileStore.readStoredMetadata(database)
                if stored == nil && isReadOnly {
                    throw CoreDataError.make(
                        NSPersistentStoreOpenError,
                        "\(url.path) holds no store yet, and a store added with NSReadOnlyPersistentStoreOption "
                            + "cannot create one: add it once without the option")
                }
                if stored == nil, try !createStore(in: database, model: model, url: url) {
                    stored = try PageFileStore.readStoredMetadata(database)
                }
                if let stored {
                    guard let storedType = stored.metadata[NSStoreTypeKey] as? String,
                        storedType == NSSQLiteStoreType || storedType == "PageFile"
                    else {
                        throw CoreDataError.make(
                            NSPersistentStoreInvalidTypeError, "\(url.path) is not a store of type \(NSSQLiteStoreType)"
                        )
                    }
                    var stored = stored
                    if !model.isConfiguration(withName: nil, compatibleWithStoreMetadata: stored.metadata),
                        migratesAutomatically, !migrated, !isReadOnly
                    {
                        guard shared.referenceCount == 1 else {
                            throw CoreDataError.make(
                                NSPersistentStoreIncompatibleVersionHashError,
                                "the store at \(url.path) is open in another coordinator with an older model: "
                                    + "remove it there before migrating", userInfo: [NSStoreTypeKey: NSSQLiteStoreType])
                        }
                        if let sourceModel = try ModelRecord.model(in: stored.metadata) {
                            // Inferred before anything changes: what cannot be inferred fails here.
                            let plan = try LightweightMigrationPlan(inferringFrom: sourceModel, to: model)
                            // The migration opens the file alone, then this store opens the result.
                            self.shared = nil
                            shared.release()
                            try migrateFile(
                                at: url.path, plan: plan, storedMetadata: stored.metadata,
                                fileSystem: engineOptions.fileSystem)
                            migrated = true
                            continue
                        }
                        stored.metadata = try migrate(
                            database, from: stored.metadata, to: model, nextKey: stored.nextKey)
                    }
                    if !model.isConfiguration(withName: nil, compatibleWithStoreMetadata: stored.metadata) {
                        throw CoreDataError.make(
                            NSPersistentStoreIncompatibleVersionHashError,
                            "the model is not compatible with the store at \(url.path): its entity version hashes "
                                + (isReadOnly
                                    ? "differ, and a store added with NSReadOnlyPersistentStoreOption is not migrated"
                                    : "differ and automatic migration was not requested")
                                + " (the store is left unchanged)",
                            userInfo: [NSStoreTypeKey: NSSQLiteStoreType])
                    }
                    super.metadata = stored.metadata
                    nextKey = stored.nextKey
                    if stored.metadata[ModelRecord.metadataKey] == nil, !isReadOnly {
                        try recordModel(model, in: database)
                    }
                    try settleIndexes(in: database, model: model, openElsewhere: shared.referenceCount > 1)
                    identifier = stored.metadata[NSStoreUUIDKey] as? String ?? UUID().uuidString
                }
                metadataChanged = false
            } catch {
                if self.shared === shared {
                    self.shared = nil
                    shared.release()
                }
                throw PageFileStore.translate(error, opening: url)
            }
            self.database = database
            return
        }
    }

    /// Creates the store's trees in an empty database; false when another coordinator or
    /// process created the store meanwhile.
    private func createStore(in database: Database, model: NSManagedObjectModel, url: URL) throws -> Bool {
        try database.write { transaction in
            // Checked again under the writer lock: another opener may have just created it.
            if try transaction.tree(named: PageFileStore.metaTreeName) != nil { return false }
            guard try transaction.treeNames().isEmpty else {
                throw CoreDataError.make(
                    NSPersistentStoreInvalidTypeError,
                    "\(url.path) is a storage-engine database but not an OpenCoreData store (no metadata tree)")
            }
            let uuid = UUID().uuidString
            identifier = uuid
            var metadata: [String: Any] = [
                NSStoreTypeKey: NSSQLiteStoreType, NSStoreUUIDKey: uuid,
                PageFileStore.schemaKey: PageFileStore.schema(of: model),
            ]
            metadata.merge(try model.storeIdentityMetadata()) { _, identity in identity }
            super.metadata = metadata
            try writeMetadata(in: transaction)
            try PageFileWriter(transaction: transaction, catalog: catalog, codec: codec).writeCatalog()
            return true
        }
    }

    static func flag(_ value: Any?) -> Bool {
        (value as? NSNumber)?.boolValue ?? (value as? Bool) ?? false
    }

    /// The metadata of the store at `url`, read without adding it to a coordinator.
    ///
    /// - Throws: `NSFileReadNoSuchFileError` when there is no file; `NSPersistentStoreInvalidTypeError`
    ///   when the file is not a store; `NSFileReadCorruptFileError` when it is damaged.
    public override class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        try withExistingDatabase(at: url) { database in
            do {
                // An older store format still shows its metadata (the record's layout is the same).
                guard let stored = try readStoredMetadata(database, acceptingOlderFormats: true) else {
                    throw CoreDataError.make(NSPersistentStoreInvalidTypeError, "\(url.path) holds no store metadata")
                }
                return stored.metadata
            } catch {
                throw translate(error, opening: url)
            }
        }
    }

    /// Calls `body` with the engine handle on the existing store file at `url`: the one this
    /// process's stores share, or one opened read-only (SPEC.md §2.12) — nothing is created
    /// or written, and the file is readable while another process has the store open with
    /// the multi-process option, or on a read-only file system.
    ///
    /// - Throws: `NSFileReadNoSuchFileError` when there is no file; the open error,
    ///   translated; `body`'s error.
    static func withExistingDatabase<Result>(at url: URL, _ body: (Database) throws -> Result) throws -> Result {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw CoreDataError.make(
                NSFileReadNoSuchFileError, "there is no store at \(url.path): check the path",
                userInfo: [NSFilePathErrorKey: url.path])
        }
        var options = Database.Options()
        options.readOnly = true
        let shared: PageFileSharedDatabase
        do {
            shared = try PageFileSharedDatabase.acquire(url, options: options, timeout: 5)
        } catch {
            throw translate(error, opening: url)
        }
        defer { shared.release() }
        return try body(shared.database)
    }

    /// Lets go of the store file; the last store of the process open on it closes it
    /// (checkpointing its log).
    public override func willRemove(from coordinator: NSPersistentStoreCoordinator?) {
        remoteChangeWatcher?.stop()
        remoteChangeWatcher = nil
        database = nil
        shared?.release()
        shared = nil
    }

    /// Watches for other processes' saves when the options ask for their notifications.
    public override func didAdd(to coordinator: NSPersistentStoreCoordinator) {
        super.didAdd(to: coordinator)
        guard let database, PageFileStore.flag(options?[NSPersistentStoreRemoteChangeNotificationPostOptionKey])
        else { return }
        remoteChangeWatcher = PageFileRemoteChangeWatcher(store: self, database: database)
    }

    deinit {
        remoteChangeWatcher?.stop()
        shared?.release()
    }

    /// Opens the engine database, waiting up to `timeout` seconds while another handle
    /// holds it (for example a child process between fork and exec still holding a just-closed
    /// handle's lock).
    static func openEngine(at url: URL, options: Database.Options, timeout: Double) throws -> Database {
        let deadline = Date().addingTimeInterval(max(0, timeout))
        while true {
            do {
                return try Database.open(at: url, options: options)
            } catch let error as StorageError where error.code == .busy && Date() < deadline {
                usleep(2_000)
            }
        }
    }

    // MARK: Metadata record

    private static func readStoredMetadata(_ database: Database, acceptingOlderFormats: Bool = false) throws
        -> (metadata: [String: Any], nextKey: Int64)?
    {
        try database.read { transaction in
            guard let tree = try transaction.tree(named: metaTreeName) else { return nil }
            guard let bytes = try tree.value(forKey: metadataKey) else {
                throw CoreDataError.make(NSFileReadCorruptFileError, "the store's metadata record is missing")
            }
            let isOlder = acceptingOlderFormats && (bytes.first ?? 0) >= 1 && (bytes.first ?? 0) < metadataFormatVersion
            guard bytes.first == metadataFormatVersion || isOlder else {
                // Format 1 stores (row format 1, fixed 8-byte keys) predate the compact
                // encoding; they are refused whole, before any row is read (SPEC.md §6).
                throw CoreDataError.make(
                    NSPersistentStoreIncompatibleVersionHashError,
                    "the store was written in store format \(bytes.first ?? 0) (row format \(bytes.first ?? 0)); "
                        + "this version reads format \(metadataFormatVersion) only: open it with the version "
                        + "that wrote it and export the objects")
            }
            let plist = try PropertyListSerialization.propertyList(from: Data(bytes.dropFirst()), format: nil)
            guard let metadata = plist as? [String: Any] else {
                throw CoreDataError.make(NSFileReadCorruptFileError, "the store's metadata record is not a dictionary")
            }
            return (metadata, try readNextKey(tree) ?? 1)
        }
    }

    /// Writes the metadata record (unless `includingRecord` is false: a save that only
    /// moved the key counter skips re-encoding the property list) and the `next-key` record.
    func writeMetadata(in transaction: WriteTransaction, includingRecord: Bool = true) throws {
        if includingRecord {
            let meta = try transaction.openTree(named: PageFileStore.metaTreeName)
            try meta.setValue(try PageFileStore.metadataRecord(metadata ?? [:]), forKey: PageFileStore.metadataKey)
        }
        try shared?.writeNextKey(in: transaction)
    }

    /// The bytes of the `metadata` record: the store format, then the binary property list.
    static func metadataRecord(_ metadata: [String: Any]) throws -> [UInt8] {
        let plist = try PropertyListSerialization.data(fromPropertyList: metadata, format: .binary, options: 0)
        return [PageFileStore.metadataFormatVersion] + Array(plist)
    }

    // MARK: Rows

    /// The row codec of this store's model and object IDs: made once (loading the store
    /// makes it), not a pair of closures per read; an ID it makes (one per row or member
    /// read) does not retain and release the store, which outlives every read, again.
    private(set) lazy var codec = PageFileRowCodec(
        entityNamed: { [unowned self] in self.catalog.entity(named: $0) },
        makeObjectID: { [unowned(unsafe) self] in self.newObjectID(for: $0, key: $1) })

    /// Runs `body` in a read transaction: the running query generation's snapshot of this
    /// store when it has one, else a new transaction on the newest data.
    func readCommitted<T>(_ body: (ReadTransaction) throws -> T) throws -> T {
        if let generation = QueryGeneration.current, let snapshot = generation.snapshot(for: self) as? ReadTransaction {
            return try body(snapshot)
        }
        return try openDatabase().read(body)
    }

    /// An engine snapshot, kept while the query generation holding it lives.
    override func queryGenerationSnapshot() throws -> AnyObject? {
        do {
            return try openDatabase().snapshot()
        } catch {
            throw translate(error)
        }
    }

    func openDatabase() throws -> Database {
        guard let database else {
            throw CoreDataError.make(NSPersistentStoreOperationError, "the store was removed from its coordinator")
        }
        return database
    }

    /// A reader of this store's rows in `transaction`.
    func reader(in transaction: ReadTransaction, codec: PageFileRowCodec) -> PageFileRowReader {
        PageFileRowReader(transaction: transaction, catalog: catalog, codec: codec)
    }

    // The fetch pipeline's row access (PageFileStore+Fetch.swift), through the reader.

    func info(for entity: NSEntityDescription) throws -> PageFileCatalog.EntityInfo { try catalog.info(for: entity) }

    func loadRow(
        _ entity: NSEntityDescription, key: Int64, in transaction: ReadTransaction, codec: PageFileRowCodec,
        resolvingBlobs: Bool = true
    ) throws -> StoreRow? {
        try reader(in: transaction, codec: codec).row(entity, key: key, resolvingBlobs: resolvingBlobs)
    }

    func destinationIDs(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID, in transaction: ReadTransaction,
        codec: PageFileRowCodec
    ) throws -> [NSManagedObjectID] {
        try reader(in: transaction, codec: codec).destinationIDs(of: relationship, for: objectID)
    }

    func resolveBlobs(_ rows: inout [StoreRow], in transaction: ReadTransaction) throws {
        try reader(in: transaction, codec: codec).resolveBlobs(&rows)
    }

    func resolveBlobs(_ row: inout StoreRow, info: PageFileCatalog.EntityInfo, in transaction: ReadTransaction) throws {
        try reader(in: transaction, codec: codec).resolveBlobs(&row, info: info)
    }

    func predicateReadsBlobs(_ predicate: NSPredicate?, info: PageFileCatalog.EntityInfo) -> Bool {
        info.predicateReadsBlobs(predicate)
    }

    /// The matching rows, through an index range when the predicate allows (SPEC.md §3.5).
    public override func fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> [StoreRow] {
        try fetchStoredRows(request, plan: StoreFetchPlan(everyRowOf: request)).rows
    }

    /// The matching rows; under a plan's leading-row limit, maybe only those, sorted (SPEC.md §3.5 Q5).
    override func fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>, plan: StoreFetchPlan) throws
        -> StoreFetchAnswer
    {
        try fetchStoredRows(request, plan: plan)
    }

    /// The index and key ranges (or the scan) for `request`: debug logging, level 2.
    override func debugPlan(for request: NSFetchRequest<NSFetchRequestResult>) -> String {
        describePlan(for: request)
    }

    /// The number of matching rows; read from an index alone when the predicate is fully indexed.
    public override func countRows(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> Int {
        try countStoredRows(request)
    }

    /// Applies the save in one engine write transaction (rows, index entries, history,
    /// metadata) through a `PageFileWriter`.
    public override func save(_ request: StoreSaveRequest) throws -> StoreSaveResult {
        try request.checkApplicable(to: self)
        let tracksHistory = isHistoryTrackingEnabled
        let started = OpenCoreDataDebugLog.isOn(2) ? OpenCoreDataDebugLog.start() : 0
        defer {
            OpenCoreDataDebugLog.log(
                2,
                "  commit: \(request.insertedRows.count) rows inserted, \(request.updatedRows.count) updated, "
                    + "\(request.deletedObjects.count) deleted in the store at \(url?.path ?? "?") in "
                    + OpenCoreDataDebugLog.elapsed(since: started))
        }
        return try writeInOneTransaction { writer in try writer.save(request, tracksHistory: tracksHistory) }
    }

    /// The stored row of `objectID`, read from its entity tree.
    public override func row(for objectID: NSManagedObjectID) throws -> StoreRow? {
        try row(for: objectID, intoSlots: false)
    }

    /// The row of a fault to fill, in the slot form when it takes it.
    override func objectRow(for objectID: NSManagedObjectID) throws -> StoreRow? {
        try row(for: objectID, intoSlots: true)
    }

    private func row(for objectID: NSManagedObjectID, intoSlots: Bool) throws -> StoreRow? {
        guard objectID.persistentStore === self else { return nil }
        let codec = self.codec
        do {
            return try readCommitted {
                try reader(in: $0, codec: codec).row(objectID.entity, key: objectID.key, intoSlots: intoSlots)
            }
        } catch {
            throw translate(error)
        }
    }

    /// The destinations of a to-many relationship: a range scan of its join tree or of its
    /// inverse's reference index (SPEC.md §3.2 R1).
    public override func objectIDs(
        forRelationship relationship: NSRelationshipDescription, of objectID: NSManagedObjectID
    ) throws -> [NSManagedObjectID] {
        guard objectID.persistentStore === self else { return [] }
        let codec = self.codec
        do {
            return try readCommitted {
                try reader(in: $0, codec: codec).destinationIDs(of: relationship, for: objectID)
            }
        } catch {
            throw translate(error)
        }
    }

    /// The stored rows of `objectIDs` in one read, their to-many relationships resolved: a
    /// prefetch step or a batch of faults costs one store call, not one per object.
    public override func rows(for objectIDs: [NSManagedObjectID]) throws -> [StoreRow?] {
        try rows(for: objectIDs, codec: codec)
    }

    /// ``rows(for:)`` decoding every reference to `named` as `named` itself: no object ID
    /// made and freed again per row.
    override func rows(for objectIDs: [NSManagedObjectID], naming named: NSManagedObjectID) throws -> [StoreRow?] {
        try rows(for: objectIDs, codec: codec(naming: named))
    }

    /// The rows of a batch of faults, decoded straight into the slot form where they take
    /// it (StoreRowSlots.swift), references to `named` as `named` itself.
    override func objectRows(for objectIDs: [NSManagedObjectID], naming named: NSManagedObjectID?) throws
        -> [StoreRow?]
    {
        try rows(for: objectIDs, codec: named.map(codec(naming:)) ?? codec, intoSlots: true)
    }

    /// The store's codec, decoding every reference to `named` as `named` itself (when it is
    /// an ID of this store).
    private func codec(naming named: NSManagedObjectID) -> PageFileRowCodec {
        let base = codec
        guard named.persistentStore === self else { return base }
        let entity = named.entity
        let key = named.key
        var naming = PageFileRowCodec(
            entityNamed: base.entityNamed,
            makeObjectID: { $0 === entity && $1 == key ? named : base.makeObjectID($0, $1) })
        naming.namedToOne = UnresolvedRelationship(destination: named)
        return naming
    }

    /// ``rows(for:)`` resolving only the to-manys named in `names`: the others stay
    /// `.unresolved`, each read from its join tree or reference index only if it is read.
    override func rows(for objectIDs: [NSManagedObjectID], resolvingToMany names: Set<String>) throws
        -> [StoreRow?]
    {
        try rows(for: objectIDs, codec: codec, resolvingToMany: names)
    }

    private func rows(
        for objectIDs: [NSManagedObjectID], codec: PageFileRowCodec, resolvingToMany names: Set<String>? = nil,
        intoSlots: Bool = false
    ) throws -> [StoreRow?] {
        do {
            return try readCommitted { transaction in
                let reader = reader(in: transaction, codec: codec)
                guard objectIDs.contains(where: { $0.persistentStore !== self }) else {
                    return try reader.completeRows(objectIDs, resolvingToMany: names, intoSlots: intoSlots)
                }
                return try objectIDs.map { id -> StoreRow? in
                    guard id.persistentStore === self else { return nil }
                    return try reader.completeRows([id], resolvingToMany: names, intoSlots: intoSlots)[0]
                }
            }
        } catch {
            throw translate(error)
        }
    }

    /// New primary keys from the store counter (persisted with the next save).
    public override func obtainPermanentIDs(for entities: [NSEntityDescription]) throws -> [NSManagedObjectID] {
        guard let shared else {
            throw CoreDataError.make(NSPersistentStoreOperationError, "the store was removed from its coordinator")
        }
        var key: Int64
        do {
            key = try shared.allocateKeys(entities.count)
        } catch {
            throw translate(error)
        }
        return entities.map { entity in
            defer { key += 1 }
            return newObjectID(for: entity, key: key)
        }
    }

    /// Applies a batch request in one engine write transaction (PageFileStore+Batch.swift).
    override func executeBatch(_ operation: StoreBatchOperation) throws -> StoreBatchOutcome {
        try executeBatchInOneTransaction(operation)
    }

    /// `count` new primary keys for rows written in `transaction`; returns the first.
    func allocateKeys(_ count: Int, in transaction: WriteTransaction) throws -> Int64 {
        guard let shared else {
            throw CoreDataError.make(NSPersistentStoreOperationError, "the store was removed from its coordinator")
        }
        return try shared.allocateKeys(count, in: transaction)
    }

    /// Sets the metadata without marking it changed (it is being written already).
    func setStoredMetadata(_ metadata: [String: Any]) {
        super.metadata = metadata
    }

    var needsMetadataWrite: Bool { metadataChanged || shared?.needsNextKeyWrite == true }
    /// Whether the metadata dictionary changed since it was last written.
    var metadataRecordChanged: Bool { metadataChanged }

    func didWriteMetadata() { metadataChanged = false }
}

/// Store option: the durability of the default store's commits — `"full"` (the default:
/// a save survives power loss), `"normal"` (survives a process crash) or `"off"` (tests).
public let PageFileStoreDurabilityOption = "OpenCoreDataDurabilityOption"

/// Store option: open a default store whose newest meta slot is damaged (one flipped byte
/// in the page file's header) as of its previous checkpoint, accepting the loss of the
/// saves after it (`true`; SPEC.md §2.1 M4). Without it such a store is refused with
/// `NSFileReadCorruptFileError` (259) naming what would be lost: nothing is opened silently
/// with less than was saved. A store that may write repairs the file at its first
/// checkpoint (at the latest when it is removed), after which it opens without the option.
public let PageFileStoreRecoverToOlderStateOption = "OpenCoreDataRecoverToOlderStateOption"
