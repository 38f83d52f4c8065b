// The notifications an undo manager posts, under Foundation's names and raw values, so
// code observing `.NSUndoManagerCheckpoint` ports unchanged.
import Foundation

extension NSNotification.Name {
    /// Posted when an undo manager opens or closes a group (except when it opens a
    /// top-level group by itself), before `undo()`, `redo()` and `undoNestedGroup()`, and
    /// when `canRedo` is read: observers register their pending undo actions now.
    public static let NSUndoManagerCheckpoint = NSNotification.Name("NSUndoManagerCheckpointNotification")
    /// Posted just before an undo manager performs an undo.
    public static let NSUndoManagerWillUndoChange = NSNotification.Name("NSUndoManagerWillUndoChangeNotification")
    /// Posted just before an undo manager performs a redo.
    public static let NSUndoManagerWillRedoChange = NSNotification.Name("NSUndoManagerWillRedoChangeNotification")
    /// Posted just after an undo manager performs an undo.
    public static let NSUndoManagerDidUndoChange = NSNotification.Name("NSUndoManagerDidUndoChangeNotification")
    /// Posted just after an undo manager performs a redo.
    public static let NSUndoManagerDidRedoChange = NSNotification.Name("NSUndoManagerDidRedoChangeNotification")
    /// Posted when an undo manager opens a group (not the groups it opens internally to
    /// record the inverse of an undo or a redo).
    public static let NSUndoManagerDidOpenUndoGroup = NSNotification.Name("NSUndoManagerDidOpenUndoGroupNotification")
    /// Posted just before an undo manager closes a group. The user info holds
    /// `NSUndoManagerGroupIsDiscardableKey` (true) when the group is discardable.
    public static let NSUndoManagerWillCloseUndoGroup = NSNotification.Name(
        "NSUndoManagerWillCloseUndoGroupNotification")
    /// Posted just after an undo manager closes a group. The user info holds
    /// `NSUndoManagerGroupIsDiscardableKey` (true) when the group is discardable.
    public static let NSUndoManagerDidCloseUndoGroup = NSNotification.Name("NSUndoManagerDidCloseUndoGroupNotification")
}

/// The user-info key of `.NSUndoManagerWillCloseUndoGroup` and
/// `.NSUndoManagerDidCloseUndoGroup` whose value is true when the closed group is
/// discardable (`setActionIsDiscardable(true)`).
public let NSUndoManagerGroupIsDiscardableKey = "NSUndoManagerGroupIsDiscardableKey"

/// Foundation's run-loop ordering for closing the automatic group. Kept for source
/// compatibility: here the group closes in a block the run loop performs (see
/// `UndoManager.groupsByEvent`), which has no ordering.
public let NSUndoCloseGroupingRunLoopOrdering = 350_000
