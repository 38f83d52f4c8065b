// A batch update's propertiesToUpdate, resolved once for the entity: each key becomes an
// attribute slot, each constant its stored value (checked before any row is read), each
// expression a program compiled for the entity's layout and evaluated per row on the
// row's values before it changes (`age + 1`, `firstName`, `department.name`). The
// commonest expressions also get a quick form that reads one stored value and computes
// the new one without the evaluator (BatchUpdateQuickForm.swift).
import Foundation

/// What a batch update writes into each matching row.
struct BatchUpdateChanges {
    /// Where one attribute's new value comes from.
    private enum Source {
        /// The same stored value for every row.
        case constant(StoreValue)
        /// An expression evaluated on each row.
        case expression(ExpressionProgram, NSExpression)
    }

    private let entity: NSEntityDescription
    private let layout: EntityLayout
    /// The changed attributes, in slot order.
    private let entries: [(slot: Int, attribute: NSAttributeDescription, source: Source)]
    /// Each changed slot with its entry's quick form, by ascending slot; nil when some
    /// entry has none (then every row's changes come from ``changes(for:view:)``).
    let quickFormsBySlot: [(slot: Int, form: BatchUpdateQuickForm)]?

    /// Whether some value is computed per row (rows then need a view to evaluate on).
    let readsRows: Bool

    /// The slots the update writes, ascending.
    var slots: [Int] { entries.map(\.slot) }

    /// `propertiesToUpdate` resolved for `entity`.
    ///
    /// - Throws: `NSManagedObjectValidationError` (1550) naming the key for a key that is not
    ///   a stored attribute of the entity (a relationship included), a constant of the wrong
    ///   type or an expression that does not compile; `NSValidationMissingMandatoryPropertyError`
    ///   (1570) for nil given to a non-optional attribute.
    init(_ propertiesToUpdate: [AnyHashable: Any]?, entity: NSEntityDescription) throws {
        self.entity = entity
        let layout = entity.layout
        self.layout = layout
        guard let properties = propertiesToUpdate, !properties.isEmpty else {
            throw CoreDataError.make(
                NSManagedObjectValidationError,
                "batch update of \(entity.name ?? "?"): propertiesToUpdate is empty; give at least one attribute")
        }
        var entries: [(slot: Int, attribute: NSAttributeDescription, source: Source)] = []
        for (key, value) in properties {
            let name = try Self.name(of: key, entity: entity)
            guard let slot = layout.slotsByName[name] else {
                throw Self.error(
                    NSManagedObjectValidationError, "'\(name)' is not a property of the entity", name, entity)
            }
            guard let attribute = layout.attributeBySlot[slot], !attribute.isTransient else {
                let what = layout.relationshipBySlot[slot] != nil ? "a relationship" : "transient"
                throw Self.error(
                    NSManagedObjectValidationError, "'\(name)' is \(what); batch updates set stored attributes only",
                    name, entity)
            }
            let source: Source
            if let invalid = (value as? NSExpression)?.validationError {
                throw Self.error(
                    NSManagedObjectValidationError, "the expression for '\(name)' is malformed: \(invalid)", name,
                    entity)
            }
            if let expression = value as? NSExpression, expression.expressionType != .constantValue {
                do {
                    var compiler = PredicateCompiler(schema: layout)
                    source = .expression(try compiler.compile(expression), expression)
                } catch {
                    throw Self.error(
                        NSManagedObjectValidationError,
                        "the expression \(expression) for '\(name)' does not apply: \(error)",
                        name, entity, underlying: error)
                }
            } else {
                let constant: Any? = (value as? NSExpression).map { $0.constantValue } ?? value
                source = .constant(try Self.stored(constant, attribute: attribute, layout: layout, slot: slot, entity))
            }
            entries.append((slot, attribute, source))
        }
        entries.sort { $0.slot < $1.slot }
        self.entries = entries
        readsRows = entries.contains { if case .expression = $0.source { true } else { false } }
        var quickForms: [(slot: Int, form: BatchUpdateQuickForm)]? = []
        for entry in entries {
            switch entry.source {
            case .constant(let value): quickForms?.append((entry.slot, .constant(value)))
            case .expression(_, let expression):
                guard let form = BatchUpdateQuickForm(expression, attribute: entry.attribute, layout: layout) else {
                    quickForms = nil
                    break
                }
                quickForms?.append((entry.slot, form))
            }
        }
        quickFormsBySlot = quickForms
    }

    /// The changes of `row`; `view` is the row for expressions to read (asked only when
    /// ``readsRows``).
    ///
    /// - Throws: 1550 naming the attribute when an expression fails or its value does not
    ///   fit; 1570 when it is nil for a non-optional attribute.
    func changes(for row: StoreRow, view: () throws -> StoreRowView) throws -> [(slot: Int, value: StoreValue)] {
        var changes: [(slot: Int, value: StoreValue)] = []
        changes.reserveCapacity(entries.count)
        var record: StoreRowView?
        for entry in entries {
            switch entry.source {
            case .constant(let value):
                changes.append((entry.slot, value))
            case .expression(let program, let expression):
                let viewed = try record ?? view()
                record = viewed
                let value: Any?
                do {
                    value = try program(EvaluationScope(record: viewed, schema: layout, variables: [:]))
                } catch {
                    throw Self.error(
                        NSManagedObjectValidationError,
                        "the expression \(expression) for '\(entry.attribute.name)' failed on \(row.objectID): \(error)",
                        entry.attribute.name, entity, underlying: error)
                }
                changes.append(
                    (
                        entry.slot,
                        try Self.stored(value, attribute: entry.attribute, layout: layout, slot: entry.slot, entity)
                    ))
            }
        }
        return changes
    }

    /// The attribute name a `propertiesToUpdate` key stands for.
    private static func name(of key: AnyHashable, entity: NSEntityDescription) throws -> String {
        if let name = key.base as? String { return name }
        if let property = key.base as? NSPropertyDescription { return property.name }
        if let name = key.base as? NSString { return name as String }
        throw CoreDataError.make(
            NSManagedObjectValidationError,
            "batch update of \(entity.name ?? "?"): a propertiesToUpdate key of type \(type(of: key.base)) is neither "
                + "an attribute name nor an attribute description")
    }

    /// The stored form of `value` (nil, NSNull or any value the attribute accepts).
    private static func stored(
        _ value: Any?, attribute: NSAttributeDescription, layout: EntityLayout, slot: Int, _ entity: NSEntityDescription
    ) throws -> StoreValue {
        guard let value = unwrapOptional(value), !(value is NSNull) else {
            guard layout.mayBeNilBySlot[slot] else {
                throw error(
                    NSValidationMissingMandatoryPropertyError,
                    "'\(attribute.name)' is not optional and cannot be set to nil",
                    attribute.name, entity)
            }
            return .null
        }
        do {
            return try BatchInsertRowBuilder.stored(value, attribute: attribute)
        } catch {
            throw Self.error(
                NSManagedObjectValidationError,
                "\(type(of: value)) \(value) does not fit '\(attribute.name)' (\(attribute.attributeType.swiftTypeName))",
                attribute.name, entity, underlying: error)
        }
    }

    private static func error(
        _ code: Int, _ message: String, _ key: String, _ entity: NSEntityDescription, underlying: Error? = nil
    ) -> NSError {
        var info: [String: Any] = [NSValidationKeyErrorKey: key]
        if let underlying { info[NSUnderlyingErrorKey] = underlying }
        return CoreDataError.make(code, "batch update of \(entity.name ?? "?"): \(message)", userInfo: info)
    }
}
