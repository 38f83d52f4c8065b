// Reading the `contents` XML of one or more model versions into a model.
//
// Xcode writes one `<model>` element (SPEC: reference/core-data-semantics.md §1g):
//
//   <model type="com.apple.IDECoreDataModeler.DataModel" userDefinedModelVersionIdentifier="3" ...>
//     <entity name representedClassName parentEntity isAbstract elementID ...>
//       <attribute .../> <relationship .../> <fetchedProperty><fetchRequest .../></fetchedProperty>
//       <fetchIndex name><fetchIndexElement property type order/></fetchIndex>
//       <uniquenessConstraints><uniquenessConstraint><constraint value/></uniquenessConstraint></uniquenessConstraints>
//       <userInfo><entry key value/></userInfo>
//     </entity>
//     <configuration name><memberEntity name/></configuration>
//     <fetchRequest name entity predicateString .../>
//     <composite name><attribute .../></composite>
//     <elements><element name positionX positionY width height/></elements>
//   </model>
//
// Reading runs in two passes: the first builds every entity and property and records
// the references between them (parent entity, destination, inverse, indexed and
// constrained properties, fetch request entities, composite definitions, configuration
// members) with their position in the file; the second resolves them, so a reference
// to something that does not exist is an error naming the line that makes it.
import Foundation

/// Reads model files into one model; several files merge (as `mergedModel(from:)` does).
final class ModelFileReader {
    /// The module a leading "." in `representedClassName` stands for.
    let productModuleName: String

    var entities: [NSEntityDescription] = []
    var entityPositions: [String: ModelFilePosition] = [:]
    var entitiesByName: [String: NSEntityDescription] = [:]
    var versionIdentifiers: Set<AnyHashable> = []
    var parents: [(entity: NSEntityDescription, parent: String, position: ModelFilePosition)] = []
    var relationships: [PendingRelationship] = []
    var indexes: [PendingIndex] = []
    var constraints: [(entity: NSEntityDescription, groups: [[String]], position: ModelFilePosition)] = []
    var requests: [(request: NSFetchRequest<NSFetchRequestResult>, entity: String, position: ModelFilePosition)] = []
    var composites: [(attribute: NSCompositeAttributeDescription, definition: String, position: ModelFilePosition)] =
        []
    var compositeDefinitions: [String: (element: ModelFileElement, file: URL)] = [:]
    var configurations: [(name: String, members: [(name: String, position: ModelFilePosition)])] = []
    var templates: [String: NSFetchRequest<NSFetchRequestResult>] = [:]

    /// A relationship whose destination and inverse are named, not yet found.
    struct PendingRelationship {
        let relationship: NSRelationshipDescription
        let destination: String
        let inverseName: String?
        let inverseEntity: String?
        let position: ModelFilePosition
    }

    /// An index whose elements name properties, not yet found.
    struct PendingIndex {
        let entity: NSEntityDescription
        let index: NSFetchIndexDescription
        let elements: [(property: String, type: NSFetchIndexElementType, ascending: Bool, position: ModelFilePosition)]
    }

    /// Files larger than this are refused before they are read whole.
    static let maximumFileSize = 64 << 20

    init(productModuleName: String = ModelClassName.productModuleName) {
        self.productModuleName = productModuleName
    }

    // MARK: Files

    /// Reads the `contents` file at `url`.
    ///
    /// - Throws: ``ModelFileError``: 260 when the file is missing, 259 when it is not a model.
    func read(contentsOf url: URL) throws(ModelFileError) {
        let data: Data
        do {
            let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0
            guard size <= ModelFileReader.maximumFileSize else {
                throw ModelFileError(
                    fileURL: url, message: "the file is \(size) bytes, more than a model file may hold")
            }
            data = try Data(contentsOf: url)
        } catch let error as ModelFileError {
            throw error
        } catch {
            let missing = !FileManager.default.fileExists(atPath: url.path)
            throw ModelFileError(
                fileURL: url,
                message: missing ? "no such file" : "cannot read the file (\(error.localizedDescription))",
                code: missing ? CocoaError.fileReadNoSuchFile.rawValue : CocoaError.fileReadUnknown.rawValue)
        }
        try read(ModelFileXMLReader.read(data, file: url), file: url)
    }

    /// Reads the root element of a `contents` file.
    func read(_ root: ModelFileElement, file: URL) throws(ModelFileError) {
        guard root.name == "model" else {
            throw ModelFileError(
                fileURL: file, line: root.line, element: root.name,
                message: "the root element is <\(root.name)>, not <model>: this is not a Core Data model file")
        }
        var attributes = ModelFileAttributes(root, file: file)
        let type = try attributes.required("type")
        guard type == "com.apple.IDECoreDataModeler.DataModel" else {
            throw attributes.error("the model type is '\(type)', not com.apple.IDECoreDataModeler.DataModel")
        }
        if let identifier = attributes.string("userDefinedModelVersionIdentifier"), !identifier.isEmpty {
            versionIdentifiers.insert(identifier)
        }
        attributes.ignore(
            "name", "documentVersion", "lastSavedToolsVersion", "systemVersion", "minimumToolsVersion", "macOSVersion",
            "iOSVersion", "sourceLanguage", "usedWithCloudKit")
        try attributes.finish()
        for child in root.children {
            switch child.name {
            case "entity": try readEntity(child, file: file)
            case "configuration": try readConfiguration(child, file: file)
            case "fetchRequest":
                let (name, request) = try readFetchRequest(child, file: file)
                guard templates[name] == nil else {
                    throw ModelFileError(
                        fileURL: file, line: child.line, element: child.name,
                        message: "a second fetch request template named '\(name)'")
                }
                templates[name] = request
            case "composite":
                var definition = ModelFileAttributes(child, file: file)
                let name = try definition.required("name")
                try definition.finish()
                guard compositeDefinitions[name] == nil else {
                    throw definition.error("a second composite attribute named '\(name)'")
                }
                compositeDefinitions[name] = (child, file)
            case "elements": try readLayout(child, file: file)
            default: throw child.unexpected(in: "model", file: file)
            }
        }
    }

    // MARK: Entities

    private func readEntity(_ element: ModelFileElement, file: URL) throws(ModelFileError) {
        var attributes = ModelFileAttributes(element, file: file)
        let entity = NSEntityDescription()
        let name = try attributes.required("name")
        guard entitiesByName[name] == nil else {
            let first = entityPositions[name].map { " (first at \($0.file.lastPathComponent) line \($0.line))" } ?? ""
            throw attributes.error("a second entity named '\(name)'\(first)")
        }
        entity.name = name
        entity.managedObjectClassName = ModelClassName.resolve(
            attributes.string("representedClassName"), module: productModuleName)
        if let parent = attributes.string("parentEntity") {
            parents.append((entity, parent, attributes.position))
        }
        entity.isAbstract = try attributes.flag("isAbstract") ?? false
        entity.renamingIdentifier = attributes.string("elementID")
        entity.versionHashModifier = attributes.string("versionHashModifier")
        attributes.ignore("syncable", "codeGenerationType")
        try attributes.finish()

        var properties: [NSPropertyDescription] = []
        var propertyNames: Set<String> = []
        for child in element.children {
            let property: NSPropertyDescription
            switch child.name {
            case "attribute": property = try readAttribute(child, file: file)
            case "relationship": property = try readRelationship(child, file: file)
            case "fetchedProperty": property = try readFetchedProperty(child, file: file)
            case "fetchIndex":
                try readFetchIndex(child, of: entity, file: file)
                continue
            case "uniquenessConstraints":
                try readUniquenessConstraints(child, of: entity, file: file)
                continue
            case "userInfo":
                entity.userInfo = try readUserInfo(child, file: file)
                continue
            default: throw child.unexpected(in: "entity", file: file)
            }
            guard propertyNames.insert(property.name).inserted else {
                throw ModelFileError(
                    fileURL: file, line: child.line, element: child.name,
                    message: "entity '\(name)' has a second property named '\(property.name)'")
            }
            properties.append(property)
        }
        entity.properties = properties
        entities.append(entity)
        entitiesByName[name] = entity
        entityPositions[name] = attributes.position
    }

    private func readFetchIndex(_ element: ModelFileElement, of entity: NSEntityDescription, file: URL)
        throws(ModelFileError)
    {
        var attributes = ModelFileAttributes(element, file: file)
        let name = try attributes.required("name")
        try attributes.finish()
        var elements:
            [(property: String, type: NSFetchIndexElementType, ascending: Bool, position: ModelFilePosition)] =
                []
        for child in element.children {
            guard child.name == "fetchIndexElement" else { throw child.unexpected(in: "fetchIndex", file: file) }
            var item = ModelFileAttributes(child, file: file)
            if item.string("expression") != nil {
                throw item.error("index elements on an expression are not supported yet (index '\(name)')")
            }
            let property = try item.required("property")
            let type: NSFetchIndexElementType
            switch try item.required("type") {
            case "Binary", "binary": type = .binary
            case "RTree", "rtree", "rTree": type = .rTree
            case let other: throw item.error("unknown index type '\(other)' (Binary or RTree)")
            }
            let order = item.string("order") ?? "ascending"
            guard order == "ascending" || order == "descending" else {
                throw item.error("unknown order '\(order)' (ascending or descending)")
            }
            try item.finish()
            try item.requireNoChildren()
            elements.append((property, type, order == "ascending", item.position))
        }
        guard !elements.isEmpty else { throw attributes.error("the index '\(name)' has no elements") }
        indexes.append(
            PendingIndex(entity: entity, index: NSFetchIndexDescription(name: name, elements: []), elements: elements))
    }

    private func readUniquenessConstraints(_ element: ModelFileElement, of entity: NSEntityDescription, file: URL)
        throws(ModelFileError)
    {
        let attributes = ModelFileAttributes(element, file: file)
        try attributes.finish()
        var groups: [[String]] = []
        for group in element.children {
            guard group.name == "uniquenessConstraint" else {
                throw group.unexpected(in: "uniquenessConstraints", file: file)
            }
            try ModelFileAttributes(group, file: file).finish()
            var names: [String] = []
            for constraint in group.children {
                guard constraint.name == "constraint" else {
                    throw constraint.unexpected(in: "uniquenessConstraint", file: file)
                }
                var item = ModelFileAttributes(constraint, file: file)
                names.append(try item.required("value"))
                try item.finish()
                try item.requireNoChildren()
            }
            if !names.isEmpty { groups.append(names) }
        }
        constraints.append((entity, groups, attributes.position))
    }

    // MARK: Model-level elements

    private func readConfiguration(_ element: ModelFileElement, file: URL) throws(ModelFileError) {
        var attributes = ModelFileAttributes(element, file: file)
        let name = try attributes.required("name")
        attributes.ignore("usedWithCloudKit", "usedWithSwiftData")
        try attributes.finish()
        var members: [(name: String, position: ModelFilePosition)] = []
        for child in element.children {
            guard child.name == "memberEntity" else { throw child.unexpected(in: "configuration", file: file) }
            var member = ModelFileAttributes(child, file: file)
            members.append((try member.required("name"), member.position))
            try member.finish()
            try member.requireNoChildren()
        }
        configurations.append((name, members))
    }

    /// The editor's diagram layout: checked for shape, otherwise ignored.
    private func readLayout(_ element: ModelFileElement, file: URL) throws(ModelFileError) {
        try ModelFileAttributes(element, file: file).finish()
        for child in element.children {
            guard child.name == "element" else { throw child.unexpected(in: "elements", file: file) }
            var item = ModelFileAttributes(child, file: file)
            item.ignore("name", "positionX", "positionY", "width", "height")
            try item.finish()
            try item.requireNoChildren()
        }
    }

    /// A `<fetchRequest>`: a template at model level, or a fetched property's request.
    func readFetchRequest(_ element: ModelFileElement, file: URL) throws(ModelFileError)
        -> (name: String, request: NSFetchRequest<NSFetchRequestResult>)
    {
        var attributes = ModelFileAttributes(element, file: file)
        let name = try attributes.required("name")
        let request = NSFetchRequest<NSFetchRequestResult>()
        requests.append((request, try attributes.required("entity"), attributes.position))
        if let format = attributes.string("predicateString"), !format.isEmpty {
            do {
                request.predicate = try NSPredicate(validatingFormat: format, argumentArray: nil)
            } catch {
                throw attributes.error("the predicate '\(format)' does not parse: \(error)")
            }
        }
        if let limit = try attributes.count("fetchLimit") { request.fetchLimit = limit }
        if let size = try attributes.count("fetchBatchSize") { request.fetchBatchSize = size }
        if let flag = try attributes.flag("includeSubentities") { request.includesSubentities = flag }
        if let flag = try attributes.flag("includePropertyValues") { request.includesPropertyValues = flag }
        if let flag = try attributes.flag("includePendingChanges") { request.includesPendingChanges = flag }
        if let flag = try attributes.flag("returnObjectsAsFaults") { request.returnsObjectsAsFaults = flag }
        if let flag = try attributes.flag("returnDistinctResults") { request.returnsDistinctResults = flag }
        try attributes.finish()
        try attributes.requireNoChildren()
        return (name, request)
    }

    /// A `<userInfo>` element's entries.
    func readUserInfo(_ element: ModelFileElement, file: URL) throws(ModelFileError) -> [AnyHashable: Any] {
        try ModelFileAttributes(element, file: file).finish()
        var result: [AnyHashable: Any] = [:]
        for child in element.children {
            guard child.name == "entry" else { throw child.unexpected(in: "userInfo", file: file) }
            var entry = ModelFileAttributes(child, file: file)
            let key = try entry.required("key")
            let value = entry.string("value") ?? ""
            try entry.finish()
            try entry.requireNoChildren()
            guard result[key] == nil else { throw entry.error("a second user info entry for the key '\(key)'") }
            result[key] = value
        }
        return result
    }
}
