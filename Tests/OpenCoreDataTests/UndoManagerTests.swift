// UndoManager: registration, undo and redo against a model of the two stacks (seeded,
// replayable), notification order, levelsOfUndo, nested groups, disable counts, action
// names, target removal, grouping by run-loop pass.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

/// A document of four integers whose changes register their own undo.
final class UndoDocument {
    let undoManager: UndoManager
    private(set) var values = [0, 0, 0, 0]

    init(undoManager: UndoManager) {
        self.undoManager = undoManager
    }

    func set(_ index: Int, to value: Int) {
        let old = values[index]
        values[index] = value
        undoManager.registerUndo(withTarget: self) { $0.set(index, to: old) }
    }
}

/// Records the undo notifications one manager posts, in order.
final class UndoNotificationLog: @unchecked Sendable {
    static let names: [NSNotification.Name] = [
        .NSUndoManagerCheckpoint, .NSUndoManagerWillUndoChange, .NSUndoManagerDidUndoChange,
        .NSUndoManagerWillRedoChange, .NSUndoManagerDidRedoChange, .NSUndoManagerDidOpenUndoGroup,
        .NSUndoManagerWillCloseUndoGroup, .NSUndoManagerDidCloseUndoGroup,
    ]
    private let lock = NSLock()
    private var entries: [String] = []
    private var observers: [NSObjectProtocol] = []

    init(_ manager: UndoManager) {
        for name in Self.names {
            observers.append(
                NotificationCenter.default.addObserver(forName: name, object: manager, queue: nil) { [weak self] note in
                    let short = note.name.rawValue.replacingOccurrences(of: "NSUndoManager", with: "")
                        .replacingOccurrences(of: "Notification", with: "")
                    let discardable = (note.userInfo?[NSUndoManagerGroupIsDiscardableKey] as? Bool) == true
                    self?.append(short + (discardable ? "(discardable)" : ""))
                })
        }
    }

    deinit {
        for observer in observers { NotificationCenter.default.removeObserver(observer) }
    }

    private func append(_ entry: String) {
        lock.lock()
        entries.append(entry)
        lock.unlock()
    }

    /// The entries since the last call.
    func take() -> [String] {
        lock.lock()
        defer {
            entries.removeAll()
            lock.unlock()
        }
        return entries
    }
}

/// The reference model: groups of (index, value to restore) and the two stacks.
private struct UndoModel {
    typealias Change = (index: Int, restore: Int)
    var values = [0, 0, 0, 0]
    var undoStack: [[Change]] = []
    var redoStack: [[Change]] = []
    var openGroups: [[Change]] = []
    var disableCount = 0
    var levels = 0

    mutating func set(_ index: Int, to value: Int, recordingInto group: inout [Change]?) {
        let old = values[index]
        values[index] = value
        if disableCount == 0 { group?.append((index, old)) }
    }

    mutating func change(_ index: Int, to value: Int) {
        var group: [Change]? = openGroups.isEmpty ? nil : openGroups.removeLast()
        set(index, to: value, recordingInto: &group)
        if let group {
            if disableCount == 0 { redoStack.removeAll() }
            openGroups.append(group)
        }
    }

    mutating func end() {
        let group = openGroups.removeLast()
        if openGroups.isEmpty {
            Self.push(group, onto: &undoStack, levels: levels)
        } else {
            let innermost = openGroups.count - 1
            openGroups[innermost] += group
        }
    }

    static func push(_ group: [Change], onto stack: inout [[Change]], levels: Int) {
        guard !group.isEmpty else { return }
        stack.append(group)
        if levels > 0 && stack.count > levels { stack.removeFirst(stack.count - levels) }
    }

    /// Performs `group` newest first, returning what its handlers register.
    mutating func perform(_ group: [Change]) -> [Change] {
        var inverse: [Change]? = []
        for change in group.reversed() { set(change.index, to: change.restore, recordingInto: &inverse) }
        return inverse ?? []
    }

    mutating func undo() {
        if openGroups.count == 1 { end() }
        guard let group = undoStack.popLast() else { return }
        let inverse = perform(group)
        Self.push(inverse, onto: &redoStack, levels: levels)
    }

    mutating func redo() {
        guard let group = redoStack.popLast() else { return }
        let inverse = perform(group)
        if openGroups.isEmpty {
            Self.push(inverse, onto: &undoStack, levels: levels)
        } else if !inverse.isEmpty {
            let innermost = openGroups.count - 1
            openGroups[innermost] += inverse
        }
    }

    var canUndo: Bool { !undoStack.isEmpty || !(openGroups.first?.isEmpty ?? true) }
}

@Suite struct UndoManagerTests {
    private func manualManager() -> UndoManager {
        let manager = UndoManager()
        manager.groupsByEvent = false
        manager.invalidStateReporter = { _ in }
        return manager
    }

    @Test func undoAndRedoOneGroup() {
        let manager = manualManager()
        let document = UndoDocument(undoManager: manager)
        #expect(!manager.canUndo && !manager.canRedo)
        manager.beginUndoGrouping()
        document.set(0, to: 5)
        document.set(1, to: 7)
        document.set(0, to: 6)
        manager.endUndoGrouping()
        #expect(manager.canUndo && !manager.canRedo && manager.groupingLevel == 0)
        manager.undo()
        #expect(document.values == [0, 0, 0, 0])
        #expect(!manager.canUndo && manager.canRedo)
        manager.redo()
        #expect(document.values == [6, 7, 0, 0])
        #expect(manager.canUndo && !manager.canRedo)
    }

    @Test func registrationDuringUndoGoesToRedoAndANewChangeClearsRedo() {
        let manager = manualManager()
        let document = UndoDocument(undoManager: manager)
        manager.beginUndoGrouping()
        document.set(2, to: 9)
        manager.endUndoGrouping()
        var sawUndoing = false
        manager.beginUndoGrouping()
        manager.registerUndo(withTarget: document) { _ in sawUndoing = manager.isUndoing && !manager.isRedoing }
        manager.endUndoGrouping()
        manager.undo()
        #expect(sawUndoing && !manager.isUndoing)
        manager.undo()
        #expect(document.values[2] == 0 && manager.canRedo)
        manager.beginUndoGrouping()
        document.set(3, to: 1)
        manager.endUndoGrouping()
        #expect(!manager.canRedo, "a registration outside undo and redo empties the redo stack")
    }

    @Test func randomSequencesMatchTheModel() {
        var random = SeededRandom(environmentOr: 0x5EED_0D0)
        for sequence in 0..<300 {
            let manager = manualManager()
            let document = UndoDocument(undoManager: manager)
            var model = UndoModel()
            var trace: [String] = []
            for _ in 0..<60 {
                let roll = random.int(in: 0...99)
                switch roll {
                case 0..<35:
                    let index = random.int(in: 0...3)
                    let value = random.int(in: 0...999)
                    trace.append("set \(index) \(value)")
                    document.set(index, to: value)
                    model.change(index, to: value)
                case 35..<50:
                    trace.append("begin")
                    manager.beginUndoGrouping()
                    model.openGroups.append([])
                case 50..<65 where !model.openGroups.isEmpty:
                    trace.append("end")
                    manager.endUndoGrouping()
                    model.end()
                case 65..<77 where model.openGroups.count <= 1:
                    trace.append("undo")
                    manager.undo()
                    model.undo()
                case 77..<87:
                    trace.append("redo")
                    manager.redo()
                    model.redo()
                case 87..<91:
                    trace.append("disable")
                    manager.disableUndoRegistration()
                    model.disableCount += 1
                case 91..<95 where model.disableCount > 0:
                    trace.append("enable")
                    manager.enableUndoRegistration()
                    model.disableCount -= 1
                case 95..<98:
                    let levels = random.int(in: 0...3)
                    trace.append("levels \(levels)")
                    manager.levelsOfUndo = levels
                    model.levels = levels
                    if levels > 0 {
                        if model.undoStack.count > levels {
                            model.undoStack.removeFirst(model.undoStack.count - levels)
                        }
                        if model.redoStack.count > levels {
                            model.redoStack.removeFirst(model.redoStack.count - levels)
                        }
                    }
                case 98..<100:
                    trace.append("removeAll")
                    manager.removeAllActions()
                    model.undoStack = []
                    model.redoStack = []
                    model.openGroups = model.openGroups.map { _ in [] }
                    model.disableCount = 0
                default:
                    continue
                }
                let agrees =
                    document.values == model.values && manager.canUndo == model.canUndo
                    && manager.canRedo == !model.redoStack.isEmpty && manager.groupingLevel == model.openGroups.count
                    && manager.isUndoRegistrationEnabled == (model.disableCount == 0)
                #expect(
                    agrees,
                    "sequence \(sequence) diverged after: \(trace.joined(separator: ", ")); \(random.replayHint)")
                if !agrees { return }
            }
        }
    }

    @Test func notificationOrder() {
        let manager = manualManager()
        let log = UndoNotificationLog(manager)
        let document = UndoDocument(undoManager: manager)
        manager.beginUndoGrouping()
        #expect(log.take() == ["Checkpoint", "DidOpenUndoGroup"])
        document.set(0, to: 1)
        manager.setActionIsDiscardable(true)
        #expect(log.take().isEmpty)
        manager.endUndoGrouping()
        #expect(
            log.take() == ["Checkpoint", "WillCloseUndoGroup(discardable)", "DidCloseUndoGroup(discardable)"])
        manager.undo()
        #expect(log.take() == ["Checkpoint", "WillUndoChange", "Checkpoint", "DidUndoChange"])
        #expect(manager.canRedo)
        #expect(log.take() == ["Checkpoint"])
        manager.redo()
        #expect(log.take() == ["Checkpoint", "WillRedoChange", "Checkpoint", "DidRedoChange"])
        manager.beginUndoGrouping()
        manager.beginUndoGrouping()
        manager.endUndoGrouping()
        #expect(
            log.take() == [
                "Checkpoint", "DidOpenUndoGroup", "Checkpoint", "DidOpenUndoGroup", "Checkpoint", "WillCloseUndoGroup",
                "DidCloseUndoGroup",
            ])
        manager.undo()
        #expect(
            log.take() == [
                "Checkpoint", "WillCloseUndoGroup", "DidCloseUndoGroup", "Checkpoint", "WillUndoChange",
                "Checkpoint", "DidUndoChange",
            ],
            "undo() closes the open top-level group first")
        #expect(document.values == [0, 0, 0, 0])
    }

    @Test func checkpointObserversRegisterIntoTheClosingGroup() {
        let manager = manualManager()
        let changes = PendingChanges(UndoDocument(undoManager: manager))
        let observer = NotificationCenter.default.addObserver(
            forName: .NSUndoManagerCheckpoint, object: manager, queue: nil
        ) { _ in changes.flush() }
        defer { NotificationCenter.default.removeObserver(observer) }
        let document = changes.document
        manager.beginUndoGrouping()
        changes.pending = [(1, 8)]
        manager.endUndoGrouping()
        #expect(document.values == [0, 8, 0, 0])
        manager.undo()
        #expect(document.values == [0, 0, 0, 0], "the change flushed at the checkpoint joined the closing group")
    }

    @Test func levelsOfUndoDropTheOldestGroups() {
        let manager = manualManager()
        let document = UndoDocument(undoManager: manager)
        manager.levelsOfUndo = 2
        for value in 1...3 {
            manager.beginUndoGrouping()
            document.set(0, to: value)
            manager.endUndoGrouping()
        }
        manager.undo()
        manager.undo()
        #expect(document.values[0] == 1 && !manager.canUndo, "the first group was dropped")
        manager.redo()
        manager.redo()
        manager.levelsOfUndo = 1
        manager.undo()
        #expect(document.values[0] == 2)
        manager.undo()
        #expect(document.values[0] == 2 && !manager.canUndo, "lowering the limit trims the stack")
    }

    @Test func nestedGroupsUndoTogetherOrOneByOne() {
        let manager = manualManager()
        let document = UndoDocument(undoManager: manager)
        manager.beginUndoGrouping()
        document.set(0, to: 1)
        manager.beginUndoGrouping()
        document.set(1, to: 2)
        manager.endUndoGrouping()
        #expect(manager.groupingLevel == 1)
        manager.undoNestedGroup()
        #expect(document.values == [1, 0, 0, 0], "undoNestedGroup undoes the inner group only")
        #expect(manager.groupingLevel == 1 && manager.canRedo)
        manager.redo()
        #expect(document.values == [1, 2, 0, 0])
        manager.endUndoGrouping()
        manager.undo()
        #expect(document.values == [0, 0, 0, 0], "undo reverts the whole top-level group")
    }

    @Test func disableCountsNest() {
        let manager = manualManager()
        let document = UndoDocument(undoManager: manager)
        manager.disableUndoRegistration()
        manager.disableUndoRegistration()
        manager.enableUndoRegistration()
        #expect(!manager.isUndoRegistrationEnabled)
        manager.beginUndoGrouping()
        document.set(0, to: 3)
        manager.endUndoGrouping()
        #expect(!manager.canUndo)
        manager.enableUndoRegistration()
        #expect(manager.isUndoRegistrationEnabled)
        manager.disableUndoRegistration()
        manager.removeAllActions()
        #expect(manager.isUndoRegistrationEnabled, "removeAllActions enables registration again")
    }

    @Test func registrationWithoutAGroupIsDroppedAndReported() {
        let manager = UndoManager()
        manager.groupsByEvent = false
        var reports: [String] = []
        manager.invalidStateReporter = { reports.append($0) }
        let document = UndoDocument(undoManager: manager)
        document.set(0, to: 1)
        #expect(!manager.canUndo && manager.groupingLevel == 0)
        #expect(reports.count == 1 && reports[0].contains("must begin a group before registering undo"))
    }

    @Test func actionNamesAndMenuTitles() {
        let manager = manualManager()
        let document = UndoDocument(undoManager: manager)
        #expect(manager.undoActionName == "" && manager.undoMenuItemTitle == "Undo")
        manager.beginUndoGrouping()
        document.set(0, to: 1)
        manager.setActionName("Typing")
        #expect(manager.undoActionName == "Typing")
        manager.endUndoGrouping()
        #expect(manager.undoMenuItemTitle == "Undo Typing" && manager.redoMenuItemTitle == "Redo")
        manager.undo()
        #expect(manager.redoActionName == "Typing" && manager.redoMenuItemTitle == "Redo Typing")
        #expect(manager.undoMenuTitle(forUndoActionName: "") == "Undo")
        #expect(manager.redoMenuTitle(forUndoActionName: "Move") == "Redo Move")
        manager.redo()
        #expect(manager.undoActionName == "Typing", "the name follows the group across undo and redo")
        manager.setActionName("Renamed")
        #expect(manager.undoActionName == "Renamed", "with no group open, the newest group is renamed")
        manager.setActionIsDiscardable(true)
        #expect(manager.undoActionIsDiscardable && !manager.redoActionIsDiscardable)
        manager.undo()
        #expect(manager.redoActionIsDiscardable)
    }

    @Test func removeAllActionsWithTarget() {
        let manager = manualManager()
        let first = UndoDocument(undoManager: manager)
        let second = UndoDocument(undoManager: manager)
        manager.beginUndoGrouping()
        first.set(0, to: 1)
        manager.endUndoGrouping()
        manager.beginUndoGrouping()
        first.set(1, to: 1)
        second.set(1, to: 2)
        manager.endUndoGrouping()
        manager.removeAllActions(withTarget: first)
        manager.undo()
        #expect(first.values == [1, 1, 0, 0] && second.values == [0, 0, 0, 0])
        #expect(!manager.canUndo, "the group holding only the removed target's action is gone")
    }

    @Test func removeAllActionsKeepsOpenGroupsOpen() {
        let manager = manualManager()
        let document = UndoDocument(undoManager: manager)
        manager.beginUndoGrouping()
        document.set(0, to: 1)
        manager.removeAllActions()
        #expect(manager.groupingLevel == 1 && !manager.canUndo)
        document.set(0, to: 2)
        manager.endUndoGrouping()
        manager.undo()
        #expect(document.values[0] == 1)
    }

    @Test func aFreedTargetIsSkipped() {
        let manager = manualManager()
        var document: UndoDocument? = UndoDocument(undoManager: manager)
        manager.beginUndoGrouping()
        document?.set(0, to: 1)
        manager.endUndoGrouping()
        document = nil
        manager.undo()
        #expect(!manager.canRedo, "the action of a freed target does nothing and registers nothing")
    }

    @Test func groupsByEventClosesTheGroupAtTheEndOfTheRunLoopPass() {
        let manager = UndoManager()
        #expect(manager.groupsByEvent && manager.runLoopModes == [.default])
        let document = UndoDocument(undoManager: manager)
        document.set(0, to: 1)
        document.set(1, to: 1)
        #expect(manager.groupingLevel == 1 && manager.canUndo)
        _ = RunLoop.current.run(mode: .default, before: Date())
        #expect(manager.groupingLevel == 0)
        document.set(2, to: 1)
        _ = RunLoop.current.run(mode: .default, before: Date())
        manager.undo()
        #expect(document.values == [1, 1, 0, 0], "each pass made its own group")
        manager.undo()
        #expect(document.values == [0, 0, 0, 0], "one pass's changes undo together")
    }

    @Test func groupsByEventNestsExplicitGroupsAndUndoClosesTheOpenGroup() {
        let manager = UndoManager()
        let document = UndoDocument(undoManager: manager)
        manager.beginUndoGrouping()
        #expect(manager.groupingLevel == 2, "an explicit group nests in the event's group, as in Foundation")
        document.set(0, to: 1)
        manager.endUndoGrouping()
        document.set(1, to: 1)
        manager.undo()
        #expect(document.values == [0, 0, 0, 0] && manager.groupingLevel == 0)
        _ = RunLoop.current.run(mode: .default, before: Date())
        #expect(manager.groupingLevel == 0 && manager.canRedo)
    }

    @Test func theAutomaticCloseWaitsForExplicitGroups() {
        let manager = UndoManager()
        let document = UndoDocument(undoManager: manager)
        manager.beginUndoGrouping()
        document.set(0, to: 1)
        _ = RunLoop.current.run(mode: .default, before: Date())
        #expect(manager.groupingLevel == 2, "an explicit group spanning passes keeps the event's group open")
        manager.endUndoGrouping()
        _ = RunLoop.current.run(mode: .default, before: Date())
        #expect(manager.groupingLevel == 0)
    }
}

/// Changes an observer applies when the undo manager posts a checkpoint, as a context
/// registers its pending changes.
///
/// `@unchecked Sendable`: notifications are delivered synchronously on the posting thread,
/// the test's own.
final class PendingChanges: @unchecked Sendable {
    let document: UndoDocument
    var pending: [(index: Int, value: Int)] = []

    init(_ document: UndoDocument) {
        self.document = document
    }

    func flush() {
        for (index, value) in pending { document.set(index, to: value) }
        pending = []
    }
}
