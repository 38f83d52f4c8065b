// schema, query, count, history: read-only commands over a store opened with its model.
import Foundation
import OpenCoreData

import class OpenCoreData.NSSortDescriptor

enum ReadCommands {
    // MARK: schema

    static func schema(_ arguments: inout InspectorArguments) throws(InspectorError) -> Int32 {
        let json = arguments.flag("--json")
        let modelPath = try arguments.value("--model")
        let path = try arguments.positional(minimum: 1, maximum: 1, what: "PATH (a store file)")[0]
        let store = try StoreOpening.open(path, modelPath: modelPath)
        let entities = store.model.entities.sorted { ($0.name ?? "") < ($1.name ?? "") }
        let description: [String: Any] = [
            "store": store.url.path, "type": store.type,
            "modelVersionChecksum": store.model.versionChecksum,
            "entities": entities.map(entitySchema),
        ]
        if json { return try printJSON(description) }
        print(
            "store: \(store.url.path) (\(store.type))\(store.snapshotDirectory == nil ? "" : ", read from a snapshot")")
        print("model version checksum: \(store.model.versionChecksum)")
        for entity in entities {
            let parent = entity.superentity?.name.map { " : \($0)" } ?? ""
            print("\nentity \(entity.name ?? "?")\(parent)\(entity.isAbstract ? " (abstract)" : "")")
            for property in entity.properties.sorted(by: { $0.name < $1.name }) {
                print("  \(propertyLine(property))")
            }
            for index in entity.indexes {
                print(
                    "  index \(index.name): \(index.elements.compactMap { $0.property?.name }.joined(separator: ", "))")
            }
            for constraint in entity.uniquenessConstraints {
                print(
                    "  unique: \(constraint.map { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name ?? "?" }.joined(separator: ", "))"
                )
            }
        }
        return 0
    }

    private static func entitySchema(_ entity: NSEntityDescription) -> [String: Any] {
        var result: [String: Any] = [
            "name": entity.name ?? "?", "abstract": entity.isAbstract,
            "properties": entity.properties.sorted(by: { $0.name < $1.name }).map(propertySchema),
            "indexes": entity.indexes.map {
                ["name": $0.name, "elements": $0.elements.compactMap { $0.property?.name }] as [String: Any]
            },
            "uniquenessConstraints": entity.uniquenessConstraints.map {
                $0.map { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name ?? "?" }
            },
        ]
        if let parent = entity.superentity?.name { result["superentity"] = parent }
        return result
    }

    private static func propertySchema(_ property: NSPropertyDescription) -> [String: Any] {
        var result: [String: Any] = ["name": property.name, "optional": property.isOptional]
        if let attribute = property as? NSAttributeDescription {
            result["kind"] = "attribute"
            result["type"] = typeName(attribute.attributeType)
            result["indexed"] = attribute.isIndexed
            if let value = attribute.defaultValue { result["default"] = jsonValue(value) }
        } else if let relationship = property as? NSRelationshipDescription {
            result["kind"] = "relationship"
            result["destination"] = relationship.destinationEntity?.name ?? "?"
            result["toMany"] = relationship.isToMany
            result["ordered"] = relationship.isOrdered
            result["deleteRule"] = ruleName(relationship.deleteRule)
            if let inverse = relationship.inverseRelationship?.name { result["inverse"] = inverse }
        } else {
            result["kind"] = "\(type(of: property))"
        }
        return result
    }

    private static func propertyLine(_ property: NSPropertyDescription) -> String {
        let optional = property.isOptional ? "" : " required"
        if let attribute = property as? NSAttributeDescription {
            let defaultText = attribute.defaultValue.map { " default \(text($0))" } ?? ""
            return "\(property.name): \(typeName(attribute.attributeType))\(optional)"
                + "\(attribute.isIndexed ? " indexed" : "")\(defaultText)"
        }
        if let relationship = property as? NSRelationshipDescription {
            let kind = relationship.isToMany ? (relationship.isOrdered ? "ordered to-many" : "to-many") : "to-one"
            let inverse = relationship.inverseRelationship.map { ", inverse \($0.name)" } ?? ""
            return "\(property.name): \(kind) \(relationship.destinationEntity?.name ?? "?")\(optional)"
                + " (\(ruleName(relationship.deleteRule))\(inverse))"
        }
        return "\(property.name): \(type(of: property))"
    }

    static func typeName(_ type: NSAttributeType) -> String {
        switch type {
        case .integer16AttributeType: "Integer 16"
        case .integer32AttributeType: "Integer 32"
        case .integer64AttributeType: "Integer 64"
        case .decimalAttributeType: "Decimal"
        case .doubleAttributeType: "Double"
        case .floatAttributeType: "Float"
        case .stringAttributeType: "String"
        case .booleanAttributeType: "Boolean"
        case .dateAttributeType: "Date"
        case .binaryDataAttributeType: "Binary Data"
        case .UUIDAttributeType: "UUID"
        case .URIAttributeType: "URI"
        case .transformableAttributeType: "Transformable"
        case .objectIDAttributeType: "Object ID"
        default: "type \(type.rawValue)"
        }
    }

    private static func ruleName(_ rule: NSDeleteRule) -> String {
        switch rule {
        case .noActionDeleteRule: "no action"
        case .nullifyDeleteRule: "nullify"
        case .cascadeDeleteRule: "cascade"
        case .denyDeleteRule: "deny"
        @unknown default: "rule \(rule.rawValue)"
        }
    }

    // MARK: query and count

    /// The fetch request of `query` and `count`: ENTITY [PREDICATE] in our predicate syntax.
    private static func request(_ positional: [String], in store: OpenedStore) throws(InspectorError)
        -> NSFetchRequest<NSManagedObject>
    {
        let entityName = positional[1]
        guard store.model.entitiesByName[entityName] != nil else {
            let known = store.model.entities.compactMap(\.name).sorted().joined(separator: ", ")
            throw .failure("the store has no entity '\(entityName)' (it has: \(known))")
        }
        let request = NSFetchRequest<NSManagedObject>(entityName: entityName)
        if positional.count > 2 {
            do {
                request.predicate = try NSPredicate(validatingFormat: positional[2])
            } catch {
                throw .failure("the predicate does not parse: \(StoreOpening.describe(error))")
            }
        }
        return request
    }

    static func count(_ arguments: inout InspectorArguments) throws(InspectorError) -> Int32 {
        let modelPath = try arguments.value("--model")
        let positional = try arguments.positional(minimum: 2, maximum: 3, what: "PATH and ENTITY")
        let store = try StoreOpening.open(positional[0], modelPath: modelPath)
        let fetch = try request(positional, in: store)
        let counted: Result<Int, Error> = store.context.performAndWait {
            Result { try store.context.count(for: fetch) }
        }
        switch counted {
        case .success(let number): print(number)
        case .failure(let error): throw .failure(StoreOpening.describe(error))
        }
        return 0
    }

    static func query(_ arguments: inout InspectorArguments) throws(InspectorError) -> Int32 {
        let json = arguments.flag("--json")
        let modelPath = try arguments.value("--model")
        let sorts = try arguments.values("--sort")
        let limitText = try arguments.value("--limit")
        let positional = try arguments.positional(minimum: 2, maximum: 3, what: "PATH and ENTITY")
        let store = try StoreOpening.open(positional[0], modelPath: modelPath)
        let fetch = try request(positional, in: store)
        if let limitText {
            guard let limit = Int(limitText), limit >= 0 else {
                throw .usage("--limit takes a number, not '\(limitText)'")
            }
            fetch.fetchLimit = limit
        }
        guard let entity = store.model.entitiesByName[positional[1]] else { return 1 }
        fetch.sortDescriptors = try sorts.map { (sort) throws(InspectorError) -> NSSortDescriptor in
            let parts = sort.split(separator: ":", maxSplits: 1).map(String.init)
            let descending = parts.count == 2 && parts[1].lowercased() == "desc"
            guard parts.count == 1 || descending || parts[1].lowercased() == "asc" else {
                throw .usage("--sort takes KEY, KEY:asc or KEY:desc, not '\(sort)'")
            }
            guard entity.propertiesByName[parts[0]] != nil || parts[0].contains(".") else {
                throw .failure("\(positional[1]) has no property '\(parts[0])' to sort by")
            }
            return NSSortDescriptor(key: parts[0], ascending: !descending)
        }
        let keys = entity.properties.filter { !($0 is NSFetchedPropertyDescription) }.map(\.name).sorted()
        let fetched: Result<[[String: Any]], Error> = store.context.performAndWait {
            Result {
                try store.context.fetch(fetch).map { object in
                    var row: [String: Any] = ["objectID": object.objectID.uriRepresentation().absoluteString]
                    for key in keys { row[key] = jsonValue(object.value(forKey: key) as Any) }
                    return row
                }
            }
        }
        let rows: [[String: Any]]
        switch fetched {
        case .success(let found): rows = found
        case .failure(let error): throw .failure(StoreOpening.describe(error))
        }
        if json { return try printJSON(rows) }
        let columns = ["objectID"] + keys
        printTable(columns, rows.map { row in columns.map { text(row[$0] ?? NSNull()) } })
        print("(\(rows.count) \(rows.count == 1 ? "object" : "objects"))")
        return 0
    }

    // MARK: history

    static func history(_ arguments: inout InspectorArguments) throws(InspectorError) -> Int32 {
        let json = arguments.flag("--json")
        let modelPath = try arguments.value("--model")
        let afterText = try arguments.value("--after")
        let path = try arguments.positional(minimum: 1, maximum: 1, what: "PATH (a store file)")[0]
        var after: Int64 = 0
        if let afterText {
            guard let number = Int64(afterText) else {
                throw .usage("--after takes a transaction number (the first column of `history`), not '\(afterText)'")
            }
            after = number
        }
        let store = try StoreOpening.open(path, modelPath: modelPath)
        let fetched: Result<[NSPersistentHistoryTransaction], Error> = store.context.performAndWait {
            Result {
                let request = NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)
                let result = try store.context.execute(request) as? NSPersistentHistoryResult
                return (result?.result as? [NSPersistentHistoryTransaction] ?? []).filter {
                    $0.transactionNumber > after
                }
            }
        }
        let transactions: [NSPersistentHistoryTransaction]
        switch fetched {
        case .success(let found): transactions = found
        case .failure(let error): throw .failure(StoreOpening.describe(error))
        }
        let formatter = ISO8601DateFormatter()
        let records: [[String: Any]] = transactions.map { transaction in
            var record: [String: Any] = [
                "transaction": transaction.transactionNumber,
                "timestamp": formatter.string(from: transaction.timestamp),
                "changes": (transaction.changes ?? []).map { change -> [String: Any] in
                    var item: [String: Any] = [
                        "change": change.changeID, "type": changeName(change.changeType),
                        "objectID": change.changedObjectID.uriRepresentation().absoluteString,
                    ]
                    if let properties = change.updatedProperties {
                        item["updatedProperties"] = properties.map(\.name).sorted()
                    }
                    return item
                },
            ]
            if let author = transaction.author { record["author"] = author }
            if let name = transaction.contextName { record["contextName"] = name }
            return record
        }
        if json { return try printJSON(records) }
        for record in records {
            let author = (record["author"] as? String).map { " by \($0)" } ?? ""
            print("transaction \(record["transaction"] ?? "?") at \(record["timestamp"] ?? "?")\(author)")
            for change in record["changes"] as? [[String: Any]] ?? [] {
                let keys = (change["updatedProperties"] as? [String]).map { " (\($0.joined(separator: ", ")))" } ?? ""
                print("  \(change["type"] ?? "?") \(change["objectID"] ?? "?")\(keys)")
            }
        }
        print("(\(records.count) \(records.count == 1 ? "transaction" : "transactions"))")
        return 0
    }

    private static func changeName(_ type: NSPersistentHistoryChangeType) -> String {
        switch type {
        case .insert: "insert"
        case .update: "update"
        case .delete: "delete"
        @unknown default: "change"
        }
    }

    // MARK: output

    /// A value as JSON holds it: relationships as object ID URIs, dates in ISO 8601, data
    /// in base 64, nil as null.
    static func jsonValue(_ value: Any) -> Any {
        switch value {
        case is NSNull: return NSNull()
        case let object as NSManagedObject: return object.objectID.uriRepresentation().absoluteString
        case let objects as Set<NSManagedObject>:
            return objects.map { $0.objectID.uriRepresentation().absoluteString }.sorted()
        case let objects as NSOrderedSet:
            return objects.array.map { jsonValue($0) }
        case let objects as NSSet:
            return objects.allObjects.map { jsonValue($0) }.compactMap { $0 as? String }.sorted()
        case let id as NSManagedObjectID: return id.uriRepresentation().absoluteString
        case let date as Date: return ISO8601DateFormatter().string(from: date)
        case let data as Data: return data.base64EncodedString()
        case let uuid as UUID: return uuid.uuidString
        case let url as URL: return url.absoluteString
        case let decimal as Decimal: return NSDecimalNumber(decimal: decimal)
        case let string as String: return string
        case let number as NSNumber: return number
        case let bool as Bool: return bool
        case let integer as Int: return integer
        case let integer as Int16: return Int(integer)
        case let integer as Int32: return Int(integer)
        case let integer as Int64: return integer
        case let double as Double: return double
        case let float as Float: return Double(float)
        case Optional<Any>.none: return NSNull()
        default: return "\(value)"
        }
    }

    /// A value in a table cell.
    static func text(_ value: Any) -> String {
        switch value {
        case is NSNull: "nil"
        case let list as [Any]: "[" + list.map { text($0) }.joined(separator: ", ") + "]"
        case let string as String: string
        default: "\(value)"
        }
    }

    private static func printJSON(_ value: Any) throws(InspectorError) -> Int32 {
        do {
            let data = try JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
            return 0
        } catch {
            throw .failure("could not write JSON: \(error)")
        }
    }

    /// Columns padded to their widest cell, a rule under the header.
    private static func printTable(_ header: [String], _ rows: [[String]]) {
        var widths = header.map(\.count)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        print(line(header))
        print(line(widths.map { String(repeating: "-", count: $0) }))
        for row in rows { print(line(row)) }
    }
}
