// The shapes of propertiesToUpdate expressions that batch updates mostly use, computed
// straight from a stored value: a constant, a key path of an attribute of the same type
// (`firstName`), and an integer attribute plus or minus an integer constant (`age + 1`).
// A form computes only what the evaluator would compute to the same stored value; for
// anything else (a nil, an overflow, a value out of the attribute's range) it declines
// and the row takes the evaluator's path, which gives the result or the error. The
// default store applies the forms to the row bytes (PageFileRowPatch.swift).
import Foundation

/// One attribute's new value in a quick form.
enum BatchUpdateQuickForm {
    case constant(StoreValue)
    /// The stored value of another attribute slot of the same type.
    case copy(slot: Int)
    /// An integer slot's value plus `offset` (a subtraction negated), kept within `range`.
    case shift(slot: Int, offset: Int64, range: ClosedRange<Int64>)

    /// The quick form of `expression` for `attribute`, or nil when it has none.
    init?(_ expression: NSExpression, attribute: NSAttributeDescription, layout: EntityLayout) {
        func attributeSlot(_ expression: NSExpression) -> (slot: Int, type: NSAttributeType)? {
            guard case .keyPath(let name) = expression.node, let slot = layout.slotsByName[name],
                slot < layout.attributeBySlot.count, let source = layout.attributeBySlot[slot],
                !source.isTransient
            else { return nil }
            return (slot, source.attributeType)
        }
        switch expression.node {
        case .keyPath:
            let copyable: Set<NSAttributeType> = [
                .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .doubleAttributeType,
                .floatAttributeType, .booleanAttributeType, .stringAttributeType, .dateAttributeType,
            ]
            guard let source = attributeSlot(expression), source.type == attribute.attributeType,
                copyable.contains(source.type)
            else { return nil }
            self = .copy(slot: source.slot)
        case .function(let name, let arguments) where arguments.count == 2:
            guard name == "add:to:" || name == "from:subtract:", let range = Self.range(of: attribute.attributeType),
                let source = attributeSlot(arguments[0]), Self.range(of: source.type) != nil,
                case .constant(let constant) = arguments[1].node,
                case .integer(let number) = PredicateValue(constant)
            else { return nil }
            if name == "add:to:" {
                self = .shift(slot: source.slot, offset: number, range: range)
            } else {
                guard number != .min else { return nil }
                self = .shift(slot: source.slot, offset: -number, range: range)
            }
        default:
            return nil
        }
    }

    /// The values an integer attribute of `type` holds, or nil for other types.
    private static func range(of type: NSAttributeType) -> ClosedRange<Int64>? {
        switch type {
        case .integer16AttributeType: Int64(Int16.min)...Int64(Int16.max)
        case .integer32AttributeType: Int64(Int32.min)...Int64(Int32.max)
        case .integer64AttributeType: Int64.min...Int64.max
        default: nil
        }
    }
}
