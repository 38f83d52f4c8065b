// Stage 7 for `.dictionaryResultType`: plain property dictionaries, expression
// values, and groups with aggregate functions (propertiesToGroupBy, havingPredicate,
// returnsDistinctResults).
import Foundation

extension NSManagedObjectContext {
    /// The dictionaries `request` asks for, built from the (sorted) matching objects of
    /// `entity` (the request's, resolved).
    ///
    /// - Throws: `KeyValueCodingError.unknownKey` for a property name the entity lacks; an
    ///   expression's evaluation error.
    func dictionaryResults(
        _ objects: [NSManagedObject], _ request: NSFetchRequest<NSFetchRequestResult>, entity: NSEntityDescription
    ) throws -> [NSDictionary] {
        let columns = (request.propertiesToFetch ?? entity.layout.attributes.map { $0 as Any }).map(FetchColumn.init)
        let groupKeys = (request.propertiesToGroupBy ?? []).compactMap { FetchColumn($0).name }
        let aggregating = columns.contains { $0.isAggregate }
        var results: [NSDictionary]
        if groupKeys.isEmpty && !aggregating {
            results = try objects.map { object in
                let dictionary = NSMutableDictionary()
                for column in columns {
                    if let value = try column.value(of: object) { dictionary[column.name] = value }
                }
                return dictionary
            }
        } else {
            var order: [[AnyHashable]] = []
            var groups: [[AnyHashable]: [NSManagedObject]] = [:]
            for object in objects {
                let key = try groupKeys.map { key in
                    (try FetchColumn(key as Any).value(of: object)).map(FetchColumn.hashable) ?? AnyHashable(NSNull())
                }
                if groups[key] == nil { order.append(key) }
                groups[key, default: []].append(object)
            }
            if order.isEmpty && groupKeys.isEmpty { order = [[]] }
            results = try order.map { key in
                let members = groups[key] ?? []
                let dictionary = NSMutableDictionary()
                for column in columns {
                    let value =
                        column.isAggregate
                        ? try column.aggregate(over: members)
                        : try members.first.flatMap {
                            try column.value(of: $0)
                        }
                    if let value { dictionary[column.name] = value }
                }
                return dictionary
            }
            if let having = request.havingPredicate {
                results = try results.filter { try having.evaluateThrowing(with: $0) }
            }
        }
        if request.returnsDistinctResults { results = distinct(results) }
        return results
    }

    /// `dictionaries` without repeats, first occurrence kept: hashed into buckets, then
    /// compared with `isEqual` only within a bucket (linear, not pairwise).
    private func distinct(_ dictionaries: [NSDictionary]) -> [NSDictionary] {
        var buckets: [Int: [NSDictionary]] = [:]
        var result: [NSDictionary] = []
        result.reserveCapacity(dictionaries.count)
        for dictionary in dictionaries {
            let key = Self.distinctHash(dictionary)
            if let bucket = buckets[key], bucket.contains(where: { $0.isEqual(dictionary) }) { continue }
            buckets[key, default: []].append(dictionary)
            result.append(dictionary)
        }
        return result
    }

    /// A hash consistent with `NSDictionary.isEqual`: keys, and the values that are hashable.
    private static func distinctHash(_ dictionary: NSDictionary) -> Int {
        var total = dictionary.count
        for (key, value) in dictionary {
            var hasher = Hasher()
            hasher.combine(String(describing: key))
            // Values compare by isEqual: NSNumber 1 equals Int 1, so numbers hash by their double value.
            switch value {
            case let number as NSNumber: hasher.combine(number.doubleValue)
            case let string as String: hasher.combine(string)
            case let objectID as NSManagedObjectID: hasher.combine(objectID)
            // Other values may be equal across bridged forms (Date and NSDate): left out of the hash.
            default: break
            }
            // Order-independent: dictionary enumeration order is unspecified.
            total &+= hasher.finalize()
        }
        return total
    }
}

/// One entry of `propertiesToFetch` / `propertiesToGroupBy`.
private struct FetchColumn {
    let name: String
    let expression: NSExpression?

    init(_ property: Any) {
        switch property {
        case let description as NSExpressionDescription:
            name = description.name
            expression = description.expression
        case let description as NSPropertyDescription:
            name = description.name
            expression = nil
        case let expression as NSExpression:
            name = expression.expressionType == .keyPath ? expression.keyPath : expression.description
            self.expression = expression.expressionType == .keyPath ? nil : expression
        default:
            name = "\(property)"
            expression = nil
        }
    }

    static let aggregates: Set<String> = [
        "sum:", "count:", "min:", "max:", "average:", "median:", "mode:", "stddev:",
    ]

    var isAggregate: Bool {
        guard let expression, expression.expressionType == .function else { return false }
        return FetchColumn.aggregates.contains(expression.function)
    }

    /// The column's value for one object: a key path (relationships as object IDs) or an expression.
    func value(of object: NSManagedObject) throws -> Any? {
        if let expression { return try expression.value(with: object) }
        let value = try object.readValue(forKeyPath: name)
        if let related = value as? NSManagedObject { return related.objectID }
        return value
    }

    /// An aggregate function applied to its argument's values over `objects`.
    func aggregate(over objects: [NSManagedObject]) throws -> Any? {
        guard let expression, let argument = expression.arguments?.first else { return nil }
        let values = try objects.compactMap { try argument.value(with: $0) }
        let function = NSExpression(
            forFunction: expression.function, arguments: [NSExpression(forConstantValue: values)])
        return try function.value(with: nil)
    }

    static func hashable(_ value: Any) -> AnyHashable {
        (value as? AnyHashable) ?? AnyHashable("\(value)")
    }
}
