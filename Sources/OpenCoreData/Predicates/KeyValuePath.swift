// Key paths as predicates read them: dotted keys through objects, dictionaries and
// relationships; a to-many step maps the rest of the path over its elements and
// flattens; `@count`, `@sum`, `@avg`, `@min`, `@max` and the union operators take
// the collection so far and the rest of the path.
import Foundation

/// Reads key paths from any value key-value coding reaches.
enum KeyValuePath {
    /// The value at `path` (already split at dots) from `object`.
    ///
    /// - Throws: `KeyValueCodingError.unknownKey` when an object has no such key.
    static func value(of object: Any?, path: ArraySlice<String>) throws -> Any? {
        var current = object
        var index = path.startIndex
        while index < path.endIndex {
            let key = path[index]
            if key.hasPrefix("@") {
                return try applyOperator(key, to: current, rest: path[(index + 1)...])
            }
            guard let raw = current else { return nil }
            // Objects first: the common step, and one cast instead of the collection probes.
            if let readable = raw as? any KeyValueReadable {
                current = try readable.readValue(forKey: key)
                index += 1
                continue
            }
            guard let value = unwrapOptional(raw) else { return nil }
            if let elements = collectionElements(value) {
                // Map the keys up to the next collection operator over the elements; the
                // operator then applies to the whole flattened collection.
                let operatorIndex = path[index...].firstIndex { $0.hasPrefix("@") } ?? path.endIndex
                let mapped = try flatMapPath(elements, path: path[index..<operatorIndex])
                if operatorIndex == path.endIndex { return mapped }
                current = mapped
                index = operatorIndex
                continue
            }
            current = try self.value(of: value, key: key)
            index += 1
        }
        return current
    }

    /// Maps `path` over `elements`, flattening collections the path yields.
    static func flatMapPath(_ elements: [Any?], path: ArraySlice<String>) throws -> [Any?] {
        var result: [Any?] = []
        result.reserveCapacity(elements.count)
        for element in elements {
            let value = try self.value(of: element, path: path)
            if let inner = collectionElements(value) {
                result.append(contentsOf: inner)
            } else {
                result.append(value)
            }
        }
        return result
    }

    /// The value for one key of `object` (not a collection).
    static func value(of object: Any, key: String) throws -> Any? {
        if let readable = object as? any KeyValueReadable {
            return try readable.readValue(forKey: key)
        }
        if let dictionary = object as? [String: Any] {
            return dictionary[key]
        }
        if let dictionary = dictionaryValue(object) {
            return dictionary[AnyHashable(key)]
        }
        throw KeyValueCodingError.unknownKey(key, in: "\(type(of: object))")
    }

    /// Applies a collection operator such as `@avg` to `value` with the key path after it.
    static func applyOperator(_ name: String, to value: Any?, rest path: ArraySlice<String>) throws -> Any? {
        // The operator's key path runs to the next operator, which then applies to the result.
        let next = path.firstIndex { $0.hasPrefix("@") } ?? path.endIndex
        let result = try applyOperator(name, to: value, keyPath: path[..<next])
        return next == path.endIndex ? result : try self.value(of: result, path: path[next...])
    }

    private static func applyOperator(_ name: String, to value: Any?, keyPath rest: ArraySlice<String>) throws -> Any? {
        let operand = unwrapOptional(value)
        // `@sum.items.price` on one object aggregates what its key path yields (Apple's example);
        // a bare `@count` of a non-collection is an error.
        guard let elements = operand == nil ? [] : collectionElements(operand) ?? (rest.isEmpty ? nil : [operand])
        else {
            throw KeyValueCodingError.unknownKey(name, in: "\(type(of: operand ?? "nil")) (not a collection)")
        }
        switch name.lowercased() {
        case "@count":
            return rest.isEmpty ? elements.count : try flatMapPath(elements, path: rest).count
        case "@sum", "@avg", "@min", "@max":
            let values = rest.isEmpty ? elements : try flatMapPath(elements, path: rest)
            return try Aggregates.apply(String(name.dropFirst()).lowercased(), to: values)
        case "@unionofobjects", "@distinctunionofobjects":
            let values = (rest.isEmpty ? elements : try flatMapPath(elements, path: rest)).compactMap {
                unwrapOptional($0)
            }
            return name.lowercased().hasPrefix("@distinct") ? Aggregates.distinct(values) : values
        case "@unionofarrays", "@distinctunionofarrays", "@unionofsets", "@distinctunionofsets":
            var values: [Any] = []
            for element in elements {
                let inner = collectionElements(element) ?? [element]
                let mapped = rest.isEmpty ? inner : try flatMapPath(inner, path: rest)
                values.append(contentsOf: mapped.compactMap { unwrapOptional($0) })
            }
            return name.lowercased().hasPrefix("@distinct") ? Aggregates.distinct(values) : values
        default:
            throw KeyValueCodingError.unknownKey(name, in: "collection (no such collection operator)")
        }
    }
}

/// Sums, averages, extremes and the statistics functions over collections of numbers.
enum Aggregates {
    /// `sum`, `avg`/`average`, `min`, `max`, `count`, `median`, `mode`, `stddev` over `values`; nils are skipped.
    static func apply(_ name: String, to values: [Any?]) throws -> Any? {
        let present = values.map { PredicateValue($0) }.filter {
            if case .null = $0 { return false }
            return true
        }
        switch name {
        case "count": return present.count
        case "min", "max":
            var best: (value: PredicateValue, raw: Any)?
            for raw in values {
                guard let raw = unwrapOptional(raw) else { continue }
                let value = PredicateValue(raw)
                if case .null = value { continue }
                guard let current = best else {
                    best = (value, raw)
                    continue
                }
                let order = try value.order(against: current.value, options: StringComparisonOptions([]))
                if (name == "min" && order == .orderedAscending) || (name == "max" && order == .orderedDescending) {
                    best = (value, raw)
                }
            }
            return best?.raw
        default: break
        }
        var numbers: [PredicateValue] = []
        for value in present {
            guard value.isNumber else {
                throw PredicateLanguageError.typeMismatch("\(name) needs numbers, not a \(value.kindName)")
            }
            numbers.append(value)
        }
        switch name {
        case "sum": return sum(numbers)
        case "avg", "average":
            guard !numbers.isEmpty else { return 0 }
            return (PredicateValue(sum(numbers)).doubleValue ?? 0) / Double(numbers.count)
        case "median":
            let sorted = numbers.compactMap(\.doubleValue).sorted()
            guard !sorted.isEmpty else { return nil }
            let middle = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        case "mode":
            var counts: [Double: Int] = [:]
            for number in numbers.compactMap(\.doubleValue) { counts[number, default: 0] += 1 }
            let best = counts.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }
            return best.map { [$0.key] } ?? []
        case "stddev":
            let doubles = numbers.compactMap(\.doubleValue)
            guard !doubles.isEmpty else { return 0.0 }
            let mean = doubles.reduce(0, +) / Double(doubles.count)
            let variance = doubles.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(doubles.count)
            return variance.squareRoot()
        default:
            throw PredicateLanguageError(.unsupported, "unknown aggregate '\(name)'")
        }
    }

    /// The sum, exact for integers until they overflow, then in Double.
    static func sum(_ numbers: [PredicateValue]) -> Any {
        var integer: Int64 = 0
        var decimal: Decimal?
        var double: Double?
        for number in numbers {
            if let total = double {
                double = total + (number.doubleValue ?? 0)
                continue
            }
            switch number {
            case .integer(let value):
                if let total = decimal {
                    decimal = total + Decimal(value)
                } else {
                    let (result, overflow) = integer.addingReportingOverflow(value)
                    if overflow { double = Double(integer) + Double(value) } else { integer = result }
                }
            case .decimal(let value):
                decimal = (decimal ?? Decimal(integer)) + value
            default:
                let base = decimal.map { NSDecimalNumber(decimal: $0).doubleValue } ?? Double(integer)
                double = base + (number.doubleValue ?? 0)
            }
        }
        if let double { return double }
        if let decimal { return decimal }
        return Int(integer)
    }

    /// `values` without repeats (by predicate equality), first occurrence kept.
    static func distinct(_ values: [Any]) -> [Any] {
        var seen = PredicateValueSet([])
        return values.filter { seen.insert(PredicateValue($0)) }
    }
}
