// UndoManager: Foundation's undo manager, which swift-corelibs-foundation does not
// ship, with Foundation's API and documented semantics.
//
// State: an undo stack and a redo stack of closed top-level groups, and the groups open
// now (outermost first). Undo pops a group and performs it inside an internal group that
// records the inverse actions its handlers register; that group goes to the redo stack
// (redo: to the undo stack). A registration outside undo and redo empties the redo
// stack. Groups that end up empty are dropped.
//
// groupsByEvent: the first registration (or beginUndoGrouping()) with no group open
// opens a top-level group, and a block performed by the current thread's run loop
// (RunLoop.perform(inModes:), in runLoopModes) closes it at the end of that pass.
// Foundation closes it from a run-loop observer; swift-corelibs-foundation exposes no
// observer, and a performed block runs in the same pass, after the source or timer whose
// handler registered. A thread whose run loop never runs never closes the group: undo()
// closes it, as Foundation's does.
//
// Programmer errors Foundation raises for (endUndoGrouping() or
// enableUndoRegistration() without a match, undo() with nested groups open, undo or redo
// while undoing) stop with a precondition failure naming the mistake. A registration
// with no group open while groupsByEvent is false is dropped with a message on standard
// error, the "invalid state" message Foundation logs.
//
// Not thread-safe, as Foundation's is not: use one undo manager from one thread (or one
// context's queue).
import Foundation

/// A general-purpose recorder of operations for undo and redo: Foundation's `UndoManager`.
///
/// Register the inverse of each change with a closure; `undo()` performs the newest group
/// of them, and the closures' own registrations become the redo:
///
/// ```swift
/// final class Counter {
///     let undoManager = UndoManager()
///     var value = 0 {
///         didSet {
///             let old = oldValue
///             undoManager.registerUndo(withTarget: self) { $0.value = old }
///         }
///     }
/// }
/// let counter = Counter()
/// counter.undoManager.groupsByEvent = false
/// counter.undoManager.beginUndoGrouping()
/// counter.value = 5
/// counter.undoManager.endUndoGrouping()
/// counter.undoManager.undo()   // value is 0
/// counter.undoManager.redo()   // value is 5
/// ```
///
/// Not thread-safe: use an undo manager from one thread (or one context's queue).
/// Selector-based registration (`registerUndo(withTarget:selector:object:)`) and
/// `prepare(withInvocationTarget:)` need the Objective-C runtime and do not exist here.
open class UndoManager: NSObject {
    private var undoStack: [UndoGroup] = []
    private var redoStack: [UndoGroup] = []
    /// The open groups, outermost first; while undoing or redoing, the first is the
    /// internal group recording the inverse.
    private var openGroups: [UndoGroup] = []
    /// How many of `openGroups` the caller cannot close: 1 while undoing or redoing.
    private var internalGroupCount = 0
    /// The top-level group opened by `groupsByEvent`, while it is open.
    private var automaticGroup: UndoGroup?
    private var automaticClosePending = false
    /// Identifies the newest scheduled close; older scheduled blocks do nothing.
    private var automaticCloseGeneration = 0
    private var disableCount = 0
    private var undoing = false
    private var redoing = false

    /// Where invalid-state messages go (tests capture them).
    var invalidStateReporter: (String) -> Void = { message in
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }

    /// An undo manager with empty stacks, grouping by event.
    public override init() {
        super.init()
    }

    // MARK: Registering

    /// Records an undo action: `handler` is called with `target` when the action is
    /// undone (or redone, for an action registered while undoing).
    ///
    /// With registration disabled, nothing is recorded. With no group open, a top-level
    /// group is opened when `groupsByEvent` is true; otherwise the action is dropped with
    /// an invalid-state message. Outside an undo or a redo, the redo stack is emptied.
    ///
    /// - Parameters:
    ///   - target: The object the action applies to. The undo manager does not keep it
    ///     alive: an action whose target is gone does nothing.
    ///   - handler: The action; it usually registers the opposite action.
    public func registerUndo<TargetType: AnyObject>(
        withTarget target: TargetType, handler: @escaping (TargetType) -> Void
    ) {
        guard disableCount == 0 else { return }
        if openGroups.isEmpty {
            guard groupsByEvent else {
                invalidStateReporter(
                    "registerUndo(withTarget:handler:): \(self) is in invalid state, must begin a group before "
                        + "registering undo (groupsByEvent is false); the action is dropped")
                return
            }
            openAutomaticGroup()
        }
        openGroups[openGroups.count - 1].append(UndoAction(target: target, handler: handler))
        if !undoing && !redoing { redoStack.removeAll() }
    }

    // MARK: Grouping

    /// Opens a group, nested in any group already open.
    ///
    /// With `groupsByEvent` and no group open, the event's top-level group opens first and
    /// this group nests inside it, as in Foundation. Posts `.NSUndoManagerCheckpoint`
    /// (unless undoing or redoing), then `.NSUndoManagerDidOpenUndoGroup`.
    open func beginUndoGrouping() {
        if openGroups.isEmpty && groupsByEvent { openAutomaticGroup() }
        let notifies = !undoing && !redoing
        if notifies { post(.NSUndoManagerCheckpoint) }
        openGroups.append(UndoGroup())
        if notifies { post(.NSUndoManagerDidOpenUndoGroup) }
    }

    /// Closes the innermost open group: a top-level group goes onto the undo stack (when
    /// it holds an action), a nested one into its parent.
    ///
    /// Posts `.NSUndoManagerCheckpoint`, `.NSUndoManagerWillCloseUndoGroup` and
    /// `.NSUndoManagerDidCloseUndoGroup` (the last two not while undoing or redoing).
    /// Calling it with no group open is a programmer error and stops the program.
    open func endUndoGrouping() {
        guard openGroups.count > internalGroupCount else {
            preconditionFailure(
                "UndoManager.endUndoGrouping() was called without a matching beginUndoGrouping() (no undo group is open)"
            )
        }
        post(.NSUndoManagerCheckpoint)
        let group = openGroups[openGroups.count - 1]
        let notifies = !undoing && !redoing
        if notifies { post(.NSUndoManagerWillCloseUndoGroup, userInfo: closingInfo(group)) }
        openGroups.removeLast()
        if group === automaticGroup { automaticGroup = nil }
        if let parent = openGroups.last {
            parent.append(group)
        } else {
            pushUndo(group)
        }
        if notifies { post(.NSUndoManagerDidCloseUndoGroup, userInfo: closingInfo(group)) }
        if groupsByEvent, openGroups.count == 1, let automaticGroup, openGroups[0] === automaticGroup {
            scheduleAutomaticClose()
        }
    }

    /// The number of open groups (nested groups count one each).
    open var groupingLevel: Int { openGroups.count }

    /// Whether a top-level group opens by itself on the first registration and closes at
    /// the end of the current run-loop pass. True by default.
    ///
    /// The close is a block performed by `RunLoop.current` in `runLoopModes`; a thread
    /// whose run loop does not run keeps the group open until `undo()` closes it. With
    /// false, every registration must happen inside `beginUndoGrouping()` and
    /// `endUndoGrouping()`.
    open var groupsByEvent = true

    /// The run-loop modes in which the automatic group closes (`[.default]`).
    open var runLoopModes: [RunLoop.Mode] = [.default] {
        didSet {
            guard automaticClosePending else { return }
            automaticClosePending = false
            scheduleAutomaticClose()
        }
    }

    /// The most top-level groups each stack keeps; the oldest are dropped beyond it.
    /// 0 (the default) keeps all.
    open var levelsOfUndo = 0 {
        didSet {
            trim(&undoStack)
            trim(&redoStack)
        }
    }

    // MARK: Enabling registration

    /// Stops recording: registrations are ignored until every disable is matched by
    /// `enableUndoRegistration()`.
    open func disableUndoRegistration() {
        disableCount += 1
    }

    /// Matches one `disableUndoRegistration()`. Calling it with registration enabled is a
    /// programmer error and stops the program.
    open func enableUndoRegistration() {
        guard disableCount > 0 else {
            preconditionFailure(
                "UndoManager.enableUndoRegistration() was called without a matching disableUndoRegistration()")
        }
        disableCount -= 1
    }

    /// Whether registrations are recorded (no unmatched `disableUndoRegistration()`).
    open var isUndoRegistrationEnabled: Bool { disableCount == 0 }

    // MARK: Undo and redo

    /// Closes the top-level group if it is the only one open, then undoes the newest
    /// group (`undoNestedGroup()`).
    ///
    /// Calling it with nested groups open, or while undoing or redoing, is a programmer
    /// error and stops the program.
    open func undo() {
        guard !undoing && !redoing else {
            preconditionFailure("UndoManager.undo() was called while an undo or redo is in progress")
        }
        if groupingLevel == 1 { endUndoGrouping() }
        guard groupingLevel == 0 else {
            preconditionFailure(
                "UndoManager.undo() was called with \(groupingLevel) nested undo groups open: close them with "
                    + "endUndoGrouping(), or undo the innermost closed one with undoNestedGroup()")
        }
        undoNestedGroup()
    }

    /// Undoes the newest group: the newest closed group inside the innermost open group,
    /// or, with no group open, the top of the undo stack. The actions its handlers
    /// register form one group on the redo stack.
    ///
    /// Posts `.NSUndoManagerCheckpoint`, then (when there is a group to undo)
    /// `.NSUndoManagerWillUndoChange` and `.NSUndoManagerDidUndoChange`.
    open func undoNestedGroup() {
        post(.NSUndoManagerCheckpoint)
        guard !undoing && !redoing else {
            preconditionFailure("UndoManager.undoNestedGroup() was called while an undo or redo is in progress")
        }
        let group: UndoGroup
        if let nested = openGroups.last?.removeLastNestedGroup() {
            group = nested
        } else if openGroups.allSatisfy(\.isEmpty), let top = undoStack.popLast() {
            group = top
        } else if openGroups.allSatisfy(\.isEmpty) {
            return
        } else {
            preconditionFailure(
                "UndoManager.undoNestedGroup() was called while the open undo group has actions registered "
                    + "after its last closed group: close the group with endUndoGrouping() first")
        }
        post(.NSUndoManagerWillUndoChange)
        let inverse = performRecordingInverse(group, undoing: true)
        if !inverse.isEmpty {
            redoStack.append(inverse)
            trim(&redoStack)
        }
        post(.NSUndoManagerDidUndoChange)
    }

    /// Performs the top group of the redo stack; the actions its handlers register form
    /// one group on the undo stack (inside the innermost open group, if one is open).
    ///
    /// Posts `.NSUndoManagerCheckpoint`, then (when there is a group to redo)
    /// `.NSUndoManagerWillRedoChange` and `.NSUndoManagerDidRedoChange`. Calling it while
    /// undoing or redoing is a programmer error and stops the program.
    open func redo() {
        post(.NSUndoManagerCheckpoint)
        guard !undoing && !redoing else {
            preconditionFailure("UndoManager.redo() was called while an undo or redo is in progress")
        }
        guard let group = redoStack.popLast() else { return }
        post(.NSUndoManagerWillRedoChange)
        let inverse = performRecordingInverse(group, undoing: false)
        if let innermost = openGroups.last {
            innermost.append(inverse)
        } else {
            pushUndo(inverse)
        }
        post(.NSUndoManagerDidRedoChange)
    }

    /// Whether there is something to undo: a group on the undo stack, or an action in the
    /// open top-level group. True does not mean `undo()` may be called now: nested
    /// groups may still be open.
    open var canUndo: Bool {
        if !undoStack.isEmpty { return true }
        guard internalGroupCount == 0, let top = openGroups.first else { return false }
        return !top.isEmpty
    }

    /// Whether the redo stack holds a group. Posts `.NSUndoManagerCheckpoint` first, so
    /// observers register pending changes (which empty the redo stack) before the answer.
    open var canRedo: Bool {
        post(.NSUndoManagerCheckpoint)
        return !redoStack.isEmpty
    }

    /// True while `undo()` or `undoNestedGroup()` performs a group.
    open var isUndoing: Bool { undoing }

    /// True while `redo()` performs a group.
    open var isRedoing: Bool { redoing }

    // MARK: Removing actions

    /// Empties both stacks and the open groups (which stay open) and enables
    /// registration again.
    open func removeAllActions() {
        undoStack.removeAll()
        redoStack.removeAll()
        for group in openGroups { group.removeAllEntries() }
        disableCount = 0
    }

    /// Removes every action registered for `target` from both stacks and the open
    /// groups; groups left without actions are dropped.
    ///
    /// - Parameter target: The object given to `registerUndo(withTarget:handler:)`,
    ///   compared by identity.
    open func removeAllActions(withTarget target: Any) {
        let object = target as AnyObject
        for group in openGroups { group.removeActions(withTarget: object) }
        for group in undoStack + redoStack { group.removeActions(withTarget: object) }
        undoStack.removeAll(where: \.isEmpty)
        redoStack.removeAll(where: \.isEmpty)
    }

    // MARK: Action names and discardability

    /// Names the current action for the Undo and Redo menu items: the open groups (or,
    /// with none open, the newest group on the undo stack). An empty string removes the
    /// name. While undoing or redoing, it names the group being recorded for the opposite
    /// stack (otherwise that group keeps the undone group's name).
    open func setActionName(_ actionName: String) {
        for group in currentGroups { group.actionName = actionName }
    }

    /// The name of the action `undo()` would undo; empty when it has none or there is
    /// nothing to undo.
    open var undoActionName: String { nextUndoGroup?.actionName ?? "" }

    /// The name of the action `redo()` would redo; empty when it has none or there is
    /// nothing to redo.
    open var redoActionName: String { redoStack.last?.actionName ?? "" }

    /// The title of an Undo menu item: "Undo" and the undo action's name.
    open var undoMenuItemTitle: String { undoMenuTitle(forUndoActionName: undoActionName) }

    /// The title of a Redo menu item: "Redo" and the redo action's name.
    open var redoMenuItemTitle: String { redoMenuTitle(forUndoActionName: redoActionName) }

    /// "Undo" followed by `actionName`, or "Undo" alone for an empty name (English: Linux
    /// has no localized Foundation strings for it).
    open func undoMenuTitle(forUndoActionName actionName: String) -> String {
        actionName.isEmpty ? "Undo" : "Undo \(actionName)"
    }

    /// "Redo" followed by `actionName`, or "Redo" alone for an empty name.
    open func redoMenuTitle(forUndoActionName actionName: String) -> String {
        actionName.isEmpty ? "Redo" : "Redo \(actionName)"
    }

    /// Marks the current action (the groups `setActionName(_:)` names) as discardable:
    /// one that may be dropped, for example when a document cannot be saved.
    open func setActionIsDiscardable(_ discardable: Bool) {
        for group in currentGroups { group.isDiscardable = discardable }
    }

    /// Whether the action `undo()` would undo is discardable.
    open var undoActionIsDiscardable: Bool { nextUndoGroup?.isDiscardable ?? false }

    /// Whether the action `redo()` would redo is discardable.
    open var redoActionIsDiscardable: Bool { redoStack.last?.isDiscardable ?? false }

    // MARK: Internals

    /// The groups the current action name and discardability apply to.
    private var currentGroups: [UndoGroup] {
        if !openGroups.isEmpty { return openGroups }
        return undoStack.last.map { [$0] } ?? []
    }

    /// The group `undo()` would undo: the open top-level group when it holds an action,
    /// else the top of the undo stack.
    private var nextUndoGroup: UndoGroup? {
        if internalGroupCount == 0, let top = openGroups.first, !top.isEmpty { return top }
        return undoStack.last
    }

    private func openAutomaticGroup() {
        let group = UndoGroup()
        openGroups.append(group)
        automaticGroup = group
        post(.NSUndoManagerDidOpenUndoGroup)
        scheduleAutomaticClose()
    }

    /// Asks the current run loop to close the automatic group at the end of this pass.
    private func scheduleAutomaticClose() {
        guard !automaticClosePending else { return }
        automaticClosePending = true
        automaticCloseGeneration &+= 1
        let generation = automaticCloseGeneration
        let reference = UndoManagerReference(self)
        RunLoop.current.perform(inModes: runLoopModes) {
            reference.manager?.closeAutomaticGroup(generation: generation)
        }
    }

    /// Closes the automatic group if it is the only open group; an explicit group still
    /// open defers the close to the `endUndoGrouping()` that returns to the top level.
    private func closeAutomaticGroup(generation: Int) {
        guard generation == automaticCloseGeneration else { return }
        automaticClosePending = false
        guard groupsByEvent, !undoing, !redoing, openGroups.count == 1, let automaticGroup,
            openGroups[0] === automaticGroup
        else { return }
        endUndoGrouping()
    }

    /// Performs `group` with an internal group open to record what its handlers
    /// register; returns that group, named after `group` unless a handler named it.
    private func performRecordingInverse(_ group: UndoGroup, undoing isUndo: Bool) -> UndoGroup {
        let savedGroups = openGroups
        let savedInternalCount = internalGroupCount
        let inverse = UndoGroup()
        openGroups = [inverse]
        internalGroupCount = 1
        if isUndo { undoing = true } else { redoing = true }
        group.perform()
        // As endUndoGrouping() does before a group closes: observers register their
        // pending changes into the inverse.
        post(.NSUndoManagerCheckpoint)
        if openGroups.count > 1 {
            invalidStateReporter(
                "\(isUndo ? "undo" : "redo"): \(self) left \(openGroups.count - 1) undo group(s) open in its "
                    + "handlers; they are closed into the \(isUndo ? "redo" : "undo") group")
            while openGroups.count > 1 {
                let nested = openGroups.removeLast()
                openGroups[openGroups.count - 1].append(nested)
            }
        }
        undoing = false
        redoing = false
        openGroups = savedGroups
        internalGroupCount = savedInternalCount
        if inverse.actionName.isEmpty { inverse.actionName = group.actionName }
        if group.isDiscardable { inverse.isDiscardable = true }
        return inverse
    }

    private func pushUndo(_ group: UndoGroup) {
        guard !group.isEmpty else { return }
        undoStack.append(group)
        trim(&undoStack)
    }

    private func trim(_ stack: inout [UndoGroup]) {
        if levelsOfUndo > 0 && stack.count > levelsOfUndo {
            stack.removeFirst(stack.count - levelsOfUndo)
        }
    }

    private func closingInfo(_ group: UndoGroup) -> [AnyHashable: Any]? {
        group.isDiscardable ? [NSUndoManagerGroupIsDiscardableKey: true] : nil
    }

    private func post(_ name: NSNotification.Name, userInfo: [AnyHashable: Any]? = nil) {
        NotificationCenter.default.post(name: name, object: self, userInfo: userInfo)
    }
}

/// A weak reference to an undo manager that the run loop's `@Sendable` block can carry.
///
/// `@unchecked Sendable` is sound because the block runs on the run loop of the thread
/// that scheduled it, the thread using the undo manager; no other thread touches it.
private final class UndoManagerReference: @unchecked Sendable {
    weak var manager: UndoManager?

    init(_ manager: UndoManager) {
        self.manager = manager
    }
}
