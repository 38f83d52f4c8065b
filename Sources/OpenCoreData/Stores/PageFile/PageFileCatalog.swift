// Where the default store keeps each entity (SPEC.md §3.1): its row tree, its index and
// unique trees, its blob slots and its to-manys kept outside the row, derived from the
// model once when the store opens. The catalog record in `store.meta` lists every index
// and join tree with what `verify()` needs to check them without the model:
//
//   <tree> TAB index|unique|reference TAB <fields, comma-separated>
//   <tree> TAB join|join-ordered TAB <source row trees>|<destination row trees>|<mirror>
//   <row tree> TAB to-one TAB <slot>|<destination row trees>
//   index-catalog TAB maintained TAB 1
//
// one line each, sorted; a field is a slot, or `slot.element...` for an element of the
// composite attribute in that slot (older readers skip such a line: not a number); the
// mirror is the inverse's join tree, `ref:<slot>` for a to-one inverse in that slot of
// the destination rows, or nothing. A to-one line names a to-one
// with an inverse, whose reference must name an existing row. The `maintained` line says
// the index and unique lines are exactly the trees the file keeps up to date: indexes are
// not in the version hashes, so a model may drop or add one without migrating, and each
// writable open reconciles the file with its model before any save (PageFileStore+IndexBuild).
// A record without that line (older builds) vouches for no index.
import Foundation
import StorageEngine

/// The default store's trees for one model: what the reader and the writer look up for
/// every row. Immutable once built; copies share one storage.
struct PageFileCatalog {
    /// One concrete entity's trees. A class: a writer takes it per row, and each copy of
    /// a struct of arrays retained and released every array.
    final class EntityInfo {
        let entity: NSEntityDescription
        let treeName: String
        /// `treeName` resolved for the engine (nil: a name the engine refuses, which the
        /// writer then opens by name to report).
        let treeHandle: TreeHandle?
        let indexes: [PageFileIndex]
        /// Whether one of `indexes` is unique: a new row of an entity without one has no
        /// key to check.
        let hasUniqueIndexes: Bool
        /// Binary attribute slots whose values may live in the blob tree (SPEC.md §3.8).
        let blobSlots: [PageFileBlobSlot]
        /// Query plan recipes by predicate template (PageFilePlanCache.swift).
        let planCache = PageFilePlanCache()
        /// To-many slots kept outside the row (SPEC.md §3.2 R1), and those in join trees.
        /// Constants, as the slot lists below: a `var` of a class is read through a dynamic
        /// exclusivity check, which every row a writer steps paid for each list it read.
        let externalSlots: [Int]
        let joinSlots: [(slot: Int, relationship: NSRelationshipDescription)]
        /// Relationship slots with an inverse that the row or a join tree holds (not those
        /// derived from the inverse): the links a save records for the integrity pass.
        let linkSlots: [Int]
        /// The to-one link slots whose removal a row's deletion records: not those whose
        /// inverse to-many is derived from them (its reference index entries go with the
        /// row, and the integrity pass has nothing to repair for such a removal).
        let deletedToOneLinkSlots: [Int]
        /// The to-many slots derived from their inverse to-ones that no index reads: a change
        /// of them alone leaves the row's bytes as stored but its version
        /// (PageFileWriter+VersionOnly.swift).
        let derivedSlots: [Int]

        init(entity: NSEntityDescription, treeName: String, indexes: [PageFileIndex], blobSlots: [PageFileBlobSlot]) {
            self.entity = entity
            self.treeName = treeName
            treeHandle = try? TreeHandle.named(treeName)
            self.indexes = indexes
            hasUniqueIndexes = indexes.contains(where: \.isUnique)
            self.blobSlots = blobSlots
            var externalSlots: [Int] = []
            var joinSlots: [(slot: Int, relationship: NSRelationshipDescription)] = []
            var linkSlots: [Int] = []
            var deletedToOneLinkSlots: [Int] = []
            var derivedSlots: [Int] = []
            for (slot, relationship) in entity.layout.relationshipBySlot.enumerated() {
                guard let relationship else { continue }
                let storage = PageFileToMany.storage(of: relationship)
                if relationship.inverseRelationship != nil {
                    if case .inverse = storage {} else { linkSlots.append(slot) }
                    if !relationship.isToMany, !Self.derivesInverse(relationship) { deletedToOneLinkSlots.append(slot) }
                }
                guard let storage else { continue }
                externalSlots.append(slot)
                switch storage {
                case .join: joinSlots.append((slot, relationship))
                case .inverse: if !indexes.contains(where: { $0.slots.contains(slot) }) { derivedSlots.append(slot) }
                }
            }
            self.externalSlots = externalSlots
            self.joinSlots = joinSlots
            self.linkSlots = linkSlots
            self.deletedToOneLinkSlots = deletedToOneLinkSlots
            self.derivedSlots = derivedSlots
        }

        /// Whether the inverse of `relationship` is a to-many the store derives from it.
        private static func derivesInverse(_ relationship: NSRelationshipDescription) -> Bool {
            guard let inverse = relationship.inverseRelationship, case .inverse = PageFileToMany.storage(of: inverse)
            else { return false }
            return true
        }

        /// Whether evaluating `predicate` may read a blob attribute of the entity
        /// (conservatively: its text names one), so candidate rows must be resolved first.
        func predicateReadsBlobs(_ predicate: NSPredicate?) -> Bool {
            guard let predicate, !blobSlots.isEmpty else { return false }
            let text = predicate.predicateFormat
            return blobSlots.contains { text.contains($0.name) }
        }
    }

    private final class Storage {
        let model: NSManagedObjectModel?
        let path: String
        var infoByEntity: [ObjectIdentifier: EntityInfo] = [:]
        var entitiesByName: [String: NSEntityDescription] = [:]
        var hasBlobSlots = false
        /// Every index's tree name, by its ordinal.
        var indexTreeNames: [String] = []
        /// Every index's tree handle, by its ordinal (as ``EntityInfo/treeHandle``).
        var indexTreeHandles: [TreeHandle?] = []

        init(model: NSManagedObjectModel?, path: String) {
            self.model = model
            self.path = path
        }
    }

    private let storage: Storage

    /// A catalog of no entities (a store not loaded yet).
    init() { storage = Storage(model: nil, path: "?") }

    /// The catalog of `model`'s entities for the store file at `path` (named in errors),
    /// leaving out the indexes whose lines are in `untrusted` (a read-only store's indexes
    /// its file does not vouch for: fetches scan instead, and values of the attributes they
    /// read may be in the blob tree).
    init(model: NSManagedObjectModel, path: String, untrusted: Set<String> = []) {
        storage = Storage(model: model, path: path)
        for entity in model.entities {
            guard let name = entity.name else { continue }
            storage.entitiesByName[name] = entity
            let trusted = PageFileIndex.indexes(of: entity).filter {
                $0.isReference || !untrusted.contains($0.recordLine)
            }
            // A read-only store never writes a unique tree: only the planner leaves untrusted ones out.
            var indexes = trusted
            for position in indexes.indices {
                indexes[position].ordinal = storage.indexTreeNames.count
                storage.indexTreeNames.append(indexes[position].treeName)
                storage.indexTreeHandles.append(try? TreeHandle.named(indexes[position].treeName))
            }
            // An attribute an untrusted index reads may still hold a value kept outside its row.
            let blobSlots = PageFileBlobSlot.slots(of: entity, indexes: trusted)
            storage.hasBlobSlots = storage.hasBlobSlots || !blobSlots.isEmpty
            storage.infoByEntity[ObjectIdentifier(entity)] = EntityInfo(
                entity: entity, treeName: "rows.\(name)", indexes: indexes, blobSlots: blobSlots)
        }
    }

    /// The model's entities, in the model's order (none before the store is loaded).
    var entities: [NSEntityDescription] { storage.model?.entities ?? [] }
    /// The store file's path, for error messages.
    var path: String { storage.path }
    /// Whether some entity has binary attribute slots (rows may need their blobs read).
    var hasBlobSlots: Bool { storage.hasBlobSlots }

    /// The tree names of every index of the catalog, by ordinal (``PageFileIndex/ordinal``).
    var indexTreeNames: [String] { storage.indexTreeNames }

    /// The handles of ``indexTreeNames``, by ordinal: the writer opens the trees by them.
    var indexTreeHandles: [TreeHandle?] { storage.indexTreeHandles }

    func entity(named name: String) -> NSEntityDescription? { storage.entitiesByName[name] }

    func infoIfAny(_ entity: NSEntityDescription) -> EntityInfo? { storage.infoByEntity[ObjectIdentifier(entity)] }

    /// - Throws: `NSCoreDataError` when `entity` is not in the store's model.
    func info(for entity: NSEntityDescription) throws -> EntityInfo {
        if let info = storage.infoByEntity[ObjectIdentifier(entity)] { return info }
        throw CoreDataError.make(
            NSCoreDataError, "entity '\(entity.name ?? "?")' is not in the model of the store at \(path)")
    }

    // MARK: The catalog record

    /// The line saying the record's index and unique lines are the trees the file maintains.
    static let maintainedLine = "index-catalog\tmaintained\t1"

    /// The catalog record's bytes: the sorted lines of every index and join tree, and
    /// ``maintainedLine``.
    var record: [UInt8] {
        var lines = storage.infoByEntity.values.flatMap(\.indexes).map(\.recordLine)
        lines.append(Self.maintainedLine)
        lines += joinLines()
        lines += toOneLines()
        lines.sort()
        return Array(lines.joined(separator: "\n").utf8)
    }

    /// The lines of the join trees: declared on the relationship's own entity, each once.
    private func joinLines() -> [String] {
        var lines: [String] = []
        for entity in entities {
            for relationship in entity.relationshipsByName.values.sorted(by: { $0.name < $1.name })
            where relationship.entity === entity {
                guard case .join(let tree, let ordered) = PageFileToMany.storage(of: relationship),
                    let destination = relationship.destinationEntity
                else { continue }
                func rowTrees(_ root: NSEntityDescription) -> String {
                    root.hierarchy(includingSubentities: true).compactMap(\.name).map { "rows.\($0)" }
                        .joined(separator: ",")
                }
                var mirror = ""
                if let inverse = relationship.inverseRelationship,
                    case .join(let inverseTree, _) = PageFileToMany.storage(of: inverse)
                {
                    mirror = inverseTree
                } else if let inverse = relationship.inverseRelationship,
                    let slot = destination.layout.slotsByName[inverse.name]
                {
                    // An ordered one-to-many: the destinations' to-one names the source.
                    mirror = "ref:\(slot)"
                }
                lines.append(
                    "\(tree)\t\(ordered ? "join-ordered" : "join")\t\(rowTrees(entity))|\(rowTrees(destination))|\(mirror)"
                )
            }
        }
        return lines
    }

    /// The lines of the to-ones with an inverse, per concrete row tree and slot (inherited
    /// to-ones included), naming the row trees their destinations live in.
    private func toOneLines() -> [String] {
        var lines: [String] = []
        for entity in entities {
            guard let name = entity.name else { continue }
            for (slot, relationship) in entity.layout.relationshipBySlot.enumerated() {
                guard let relationship, !relationship.isToMany, relationship.inverseRelationship != nil,
                    let destination = relationship.destinationEntity
                else { continue }
                let trees = destination.hierarchy(includingSubentities: true).compactMap(\.name)
                    .map { "rows.\($0)" }.joined(separator: ",")
                lines.append("rows.\(name)\tto-one\t\(slot)|\(trees)")
            }
        }
        return lines
    }

    /// The to-ones with an inverse a catalog record lists, by row tree: their slot and the
    /// row trees their destinations live in (read without the model; damaged lines are left out).
    static func toOnes(inRecord record: String) -> [String: [(slot: Int, destinations: [String])]] {
        var result: [String: [(slot: Int, destinations: [String])]] = [:]
        for line in record.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 3, fields[1] == "to-one" else { continue }
            let parts = fields[2].split(separator: "|", omittingEmptySubsequences: false)
            guard parts.count == 2, let slot = Int(parts[0]), slot >= 0 else { continue }
            result[String(fields[0]), default: []].append((slot, parts[1].split(separator: ",").map(String.init)))
        }
        return result
    }

    /// The index and unique lines of a record that has ``maintainedLine`` (the indexes the
    /// file keeps up to date), or nil for a record without it, which vouches for none.
    static func maintainedIndexLines(inRecord record: String) -> Set<String>? {
        let lines = record.split(separator: "\n")
        guard lines.contains(Substring(maintainedLine)) else { return nil }
        return Set(
            lines.lazy.filter { line in
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
                return fields.count == 3 && (fields[1] == "index" || fields[1] == "unique")
            }.map(String.init))
    }

    /// The indexes of `entityName` listed in a catalog record (read without the model).
    static func indexes(inRecord record: String, entityName: String) -> [PageFileIndex] {
        record.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 3 else { return nil }
            let tree = String(fields[0])
            let unique = fields[1] == "unique"
            let reference = fields[1] == "reference"
            guard unique || reference || fields[1] == "index" else { return nil }
            let prefix = (reference ? "rel." : unique ? "unique." : "index.") + entityName + "."
            guard tree.hasPrefix(prefix) else { return nil }
            let keyFields = fields[2].split(separator: ",").map(StoreKeyField.init(recordText:))
            // A field that is not a slot number (or is negative) is damage: the line is not trusted.
            guard !keyFields.contains(where: { $0 == nil }) else { return nil }
            var index = PageFileIndex(
                treeName: tree, name: String(tree.dropFirst(prefix.count)), fields: keyFields.compactMap { $0 },
                attributeTypes: [], isUnique: unique)
            index.isReference = reference
            return index
        }
    }

    /// The ordered flag of every join tree a catalog record lists, by tree name.
    static func joinTrees(inRecord record: String) -> [String: Bool] {
        var ordered: [String: Bool] = [:]
        for line in record.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 3, fields[1] == "join" || fields[1] == "join-ordered" else { continue }
            ordered[String(fields[0])] = fields[1] == "join-ordered"
        }
        return ordered
    }
}
