// The history journal through a migration (SPEC.md §3.7 H6): records name entities and
// properties, so after a rename they would name what the model no longer has and
// fetching them would fail. Core Data's SQLite history names entities by number, which
// its migration maps, so history read after a migration names the new entities. A
// migration here rewrites each record in the destination's names — entity renames,
// property renames, changes of removed entities dropped (their objects are gone),
// updated and preserved properties that were removed dropped — keeping sequences,
// timestamps, authors and context names, so tokens keep working. Records that need no
// change keep their bytes.
import Foundation

/// Rewrites history records for a migration's destination model.
struct MigrationHistoryRewrite {
    /// Source entity name → destination entity name (absent: removed).
    private let entities: [String: String]
    /// Source entity name → source property name → destination property name (absent:
    /// removed).
    private let properties: [String: [String: String]]
    /// Whether any name changes or disappears.
    let changesNames: Bool

    /// A rewrite from `stored` (source entity name → its stored property names) through
    /// the given maps.
    private init(stored: [String: [String]], entities: [String: String], properties: [String: [String: String]]) {
        self.entities = entities
        self.properties = properties
        changesNames = stored.contains { entity, names in
            guard let destination = entities[entity], destination == entity else { return true }
            let map = properties[entity] ?? [:]
            return names.contains { map[$0] != $0 }
        }
    }

    /// The rewrite for lightweight migration by `plan`.
    init(_ plan: LightweightMigrationPlan) {
        var stored: [String: [String]] = [:]
        var entities: [String: String] = [:]
        var properties: [String: [String: String]] = [:]
        for source in plan.source.entities {
            guard let name = source.name else { continue }
            let layout = source.layout
            stored[name] = layout.properties.indices.filter { !layout.transientBySlot[$0] }.map {
                layout.properties[$0].name
            }
            guard let destination = plan.destinationEntity(continuing: source),
                let mapping = plan.mapping(of: destination)
            else { continue }
            entities[name] = destination.name ?? ""
            var names: [String: String] = [:]
            let destinationProperties = destination.layout.properties
            for (slot, plan) in mapping.slots.enumerated() {
                switch plan {
                case .attribute(let from, _), .relationship(let from, _):
                    names[layout.properties[from].name] = destinationProperties[slot].name
                default:
                    break
                }
            }
            properties[name] = names
        }
        self.init(stored: stored, entities: entities, properties: properties)
    }

    /// The rewrite for migrating a store without a model record (SPEC.md §3.3 M4):
    /// `schema` holds each stored entity's property names; entities continue their
    /// namesakes in `model`, and a property continues the old property its renaming
    /// identifier, else its name, names (the first such property in slot order).
    init(schema: [String: [String]], model: NSManagedObjectModel) {
        var entities: [String: String] = [:]
        var properties: [String: [String: String]] = [:]
        for (name, oldNames) in schema {
            guard let entity = model.entitiesByName[name] else { continue }
            entities[name] = name
            let old = Set(oldNames)
            var names: [String: String] = [:]
            let layout = entity.layout
            for (slot, property) in layout.properties.enumerated() where !layout.transientBySlot[slot] {
                guard
                    let from = [property.renamingIdentifier, property.name].compactMap({ $0 }).first(
                        where: old.contains)
                else { continue }
                if names[from] == nil { names[from] = property.name }
            }
            properties[name] = names
        }
        self.init(stored: schema, entities: entities, properties: properties)
    }

    /// `bytes`, a history record, in the destination's names.
    ///
    /// - Throws: `NSCoreDataError` (134060) for a damaged record.
    func rewritten(_ bytes: [UInt8], what: String) throws -> [UInt8] {
        guard changesNames else { return bytes }
        var record = try PersistentHistoryRecord(decoding: bytes, what: what)
        record.changes = record.changes.compactMap { change in
            guard let entity = entities[change.entityName] else { return nil }
            let names = properties[change.entityName] ?? [:]
            var copy = change
            copy.entityName = entity
            copy.updatedProperties = change.updatedProperties.compactMap { names[$0] }
            copy.tombstone = change.tombstone.compactMap { entry in
                names[entry.name].map { PersistentHistoryRecord.Tombstone(name: $0, value: entry.value) }
            }
            return copy
        }
        return record.encoded()
    }
}
