// Undo: the context's changes recorded through the object lifecycle and registered
// with its undo manager.
//
// The recorder is the lifecycle's observer while the context has an undo manager. It
// keeps the steps since the last processPendingChanges() (property changes with their
// old values — each side of an inverse is its own step —, inserts, deletes, undeletes)
// and processPendingChanges() registers them as one undo action. Undoing the action
// reverts the steps newest first through the same lifecycle calls (a change back to the
// old value, an insert by a delete, a delete by an undelete or, once the deleted object
// has left the context, by inserting it again); the lifecycle reports those in turn, and
// the processPendingChanges() that ends the action registers them as its redo. A
// restored property counts as changed only when it differs from the last saved value,
// so undoing every change since a save leaves the context without changes, and undoing
// a saved change leaves one to save.
//
// As in Core Data, the context processes pending changes at each checkpoint of its undo
// manager (a group opening or closing, an undo or redo), so an event's changes land in
// its group; changes made while registration is disabled are never recorded; rollback()
// and reset() empty the undo manager; save() keeps it.
import Foundation

extension NSManagedObjectContext {
    /// Reverts the newest undo group of the context's undo manager (nothing without one).
    ///
    /// Pending changes are processed first, so they are part of what is undone.
    ///
    /// ```swift
    /// context.undoManager = UndoManager()
    /// person.age = 40
    /// context.undo()   // person.age is back to its value before
    /// ```
    public func undo() {
        guard let undoManager else { return }
        processPendingChanges()
        undoManager.undo()
    }

    /// Performs again the newest group that ``undo()`` reverted (nothing without an undo manager).
    public func redo() {
        guard let undoManager else { return }
        processPendingChanges()
        undoManager.redo()
    }

    /// Installs or removes the undo recorder for `undoManager` (called when it is set).
    func undoManagerDidChange() {
        if let undoManager {
            let recorder = ContextUndoRecorder(context: self, undoManager: undoManager)
            undoRecorder = recorder
            lifecycle.observer = recorder
        } else {
            undoRecorder = nil
            lifecycle.observer = nil
        }
    }

    /// Forgets every recorded step and undo action (rollback and reset).
    func clearUndo() {
        guard let undoRecorder else { return }
        undoRecorder.dropPendingSteps()
        undoManager?.removeAllActions()
    }

    /// Reverts `steps`, newest first, and registers what that changed as the opposite action.
    fileprivate func revert(_ steps: [UndoStep]) {
        for step in steps.reversed() {
            switch step {
            case .change(let object, let slot, let oldValue):
                guard object.isRegistered(in: self) else { continue }
                object.fireFaultIfNeeded()
                guard slot < object.values.count else { continue }
                ObjectLifecycle.restore(object, slot: slot, to: oldValue)
            case .insert(let object), .undelete(let object):
                if object.isRegistered(in: self), !object.isDeleted { delete(object) }
            case .delete(let object):
                if object.isRegistered(in: self) {
                    if object.isDeleted { lifecycle.undelete(object) }
                } else if object.managedObjectContext == nil {
                    // Discarded (an inserted object) or saved away: it comes back as inserted.
                    lifecycle.insert(object, awakes: false)
                }
            }
        }
        processPendingChanges()
    }
}

/// One recorded change, with what reverting it needs.
enum UndoStep {
    /// `slot` of the object changed; reverting stores `oldValue` back.
    case change(NSManagedObject, slot: Int, oldValue: Any?)
    case insert(NSManagedObject)
    case delete(NSManagedObject)
    case undelete(NSManagedObject)
}

/// Records a context's changes for its undo manager (see the file comment). Used on the
/// context's queue only, as the context's objects are.
final class ContextUndoRecorder: ObjectLifecycleObserver, @unchecked Sendable {
    private let contextHandle: WeakHandle<NSManagedObjectContext>
    private var context: NSManagedObjectContext? { contextHandle.target }
    private weak var undoManager: UndoManager?
    private var steps: [UndoStep] = []
    /// Set while registering, so a checkpoint the registration causes does not re-enter.
    private var isRegistering = false
    private var checkpointObserver: (any NSObjectProtocol)?

    init(context: NSManagedObjectContext, undoManager: UndoManager) {
        self.contextHandle = context.referenceHandle
        self.undoManager = undoManager
        // Delivered on the posting thread: the undo manager is used on the context's queue.
        checkpointObserver = NotificationCenter.default.addObserver(
            forName: .NSUndoManagerCheckpoint, object: undoManager, queue: nil
        ) { [weak self] _ in
            guard let self, !self.isRegistering, !self.steps.isEmpty else { return }
            self.context?.processPendingChanges()
        }
    }

    deinit {
        if let checkpointObserver { NotificationCenter.default.removeObserver(checkpointObserver) }
    }

    private var isRecording: Bool { undoManager?.isUndoRegistrationEnabled ?? false }

    func object(_ object: NSManagedObject, didUndergo transition: ObjectTransition) {
        guard isRecording else { return }
        switch transition {
        case .inserted: steps.append(.insert(object))
        case .deleted: steps.append(.delete(object))
        case .undeleted: steps.append(.undelete(object))
        default: break
        }
    }

    func object(_ object: NSManagedObject, didChangeSlot slot: Int, from oldValue: Any?, to newValue: Any?) {
        guard isRecording else { return }
        steps.append(.change(object, slot: slot, oldValue: oldValue))
    }

    func objectsDidChange(_ changes: ObjectChanges) {}

    /// Registers the steps since the last call as one undo action (called at the end of
    /// processPendingChanges()); with registration disabled they are dropped.
    func registerPendingSteps() {
        guard !steps.isEmpty, !isRegistering else { return }
        let recorded = steps
        steps = []
        guard let undoManager, let context, undoManager.isUndoRegistrationEnabled else { return }
        isRegistering = true
        defer { isRegistering = false }
        undoManager.registerUndo(withTarget: context) { context in context.revert(recorded) }
    }

    func dropPendingSteps() {
        steps = []
    }
}
