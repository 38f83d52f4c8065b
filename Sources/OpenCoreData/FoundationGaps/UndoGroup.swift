// The undo manager's record: a group holds actions and closed nested groups in
// registration order, and performing it runs them newest first, so the state each
// action expects is the state the later ones restored.
import Foundation

/// One registered undo action: a handler and the target it was registered for.
///
/// The target is held weakly, as Foundation holds it unowned: an action whose target
/// is gone does nothing instead of reaching a freed object.
final class UndoAction {
    private weak var target: AnyObject?
    private let handler: (AnyObject) -> Void

    init<Target: AnyObject>(target: Target, handler: @escaping (Target) -> Void) {
        self.target = target
        // The handler only ever receives the target it was registered with.
        self.handler = { object in
            if let typed = object as? Target { handler(typed) }
        }
    }

    /// True when `object` is this action's target and still alive (an identifier can be
    /// reused once its object is freed).
    func hasTarget(_ object: AnyObject) -> Bool {
        guard let target else { return false }
        return target === object
    }

    /// Runs the handler with the target, if the target still exists.
    func perform() {
        if let target { handler(target) }
    }
}

/// An undo group: actions and nested groups, a name for menus and a discardable flag.
final class UndoGroup {
    /// One entry, in registration order.
    enum Entry {
        case action(UndoAction)
        case group(UndoGroup)
    }

    private(set) var entries: [Entry] = []
    /// The action name (`setActionName(_:)`); empty when none was set.
    var actionName = ""
    /// Whether the group may be discarded (`setActionIsDiscardable(_:)`).
    var isDiscardable = false

    /// True when the group, counting nested groups, holds no action.
    var isEmpty: Bool {
        entries.allSatisfy { entry in
            if case .group(let nested) = entry { return nested.isEmpty }
            return false
        }
    }

    /// The last entry when it is a closed nested group.
    var lastNestedGroup: UndoGroup? {
        if case .group(let nested)? = entries.last { return nested }
        return nil
    }

    func append(_ action: UndoAction) {
        entries.append(.action(action))
    }

    /// Adds a closed group as the newest entry, unless it holds nothing.
    func append(_ group: UndoGroup) {
        if !group.isEmpty { entries.append(.group(group)) }
    }

    /// Removes and returns the newest entry, which must be a nested group.
    func removeLastNestedGroup() -> UndoGroup? {
        guard let nested = lastNestedGroup else { return nil }
        entries.removeLast()
        return nested
    }

    /// Forgets every action, keeping the group itself.
    func removeAllEntries() {
        entries.removeAll()
    }

    /// Forgets the actions registered for `target`, and nested groups left empty.
    func removeActions(withTarget target: AnyObject) {
        entries.removeAll { entry in
            switch entry {
            case .action(let action):
                return action.hasTarget(target)
            case .group(let nested):
                nested.removeActions(withTarget: target)
                return nested.isEmpty
            }
        }
    }

    /// Runs every action, newest first, nested groups included.
    func perform() {
        for entry in entries.reversed() {
            switch entry {
            case .action(let action): action.perform()
            case .group(let nested): nested.perform()
            }
        }
    }
}
