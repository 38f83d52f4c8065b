import Foundation
import StorageEngine
import Testing

@testable import StorageEngine

/// The internal checks (Support/InternalChecks.swift) find what they are meant to find:
/// each problem function is shown a deliberately broken page, state or tree, and, in
/// builds that run the checks, a broken write traps with the check's message.
@Suite struct InternalCheckTests {
    /// A leaf page of `size` bytes holding `keys` (one byte each, empty values) in the
    /// order given, sorted or not.
    private func leaf(_ keys: [UInt8], size: Int = 512) -> Page {
        let page = Page(size: size)
        page.format(.leaf, number: 7)
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
        defer { scratch.deallocate() }
        for key in keys {
            let count = [key].withUnsafeBytes {
                LeafCell.write(scratch, key: $0, value: UnsafeRawBufferPointer(start: nil, count: 0), overflowPage: nil)
            }
            _ = page.insertCell(CellImage(base: scratch, count: count), at: page.count)
        }
        return page
    }

    @Test func fieldsOutsideThePageAreFound() {
        let page = Page(size: 512)
        #expect(page.fieldProblem(at: 0, width: 8) == nil)
        #expect(page.fieldProblem(at: 504, width: 8) == nil)
        #expect(page.fieldProblem(at: 505, width: 8)?.hasPrefix("P1:") == true)
        #expect(page.fieldProblem(at: -1, width: 1) != nil)
        #expect(page.writeProblem(at: 511, width: 2) != nil)
    }

    @Test func cellsAndSlotsOutsideTheContentAreFound() {
        let page = leaf([1, 2, 3])
        #expect(page.slotProblem(2) == nil)
        #expect(page.slotProblem(3)?.hasPrefix("§2.2:") == true)
        #expect(page.cellProblem(atOffset: page.slot(0), headerSize: LeafCell.headerSize) == nil)
        #expect(page.cellProblem(atOffset: page.contentStart - 1, headerSize: LeafCell.headerSize) != nil)
        #expect(page.cellProblem(atOffset: 510, headerSize: LeafCell.headerSize) != nil)
        #expect(page.layoutProblem == nil)
        page.contentStart = SlotArray.offset(of: 2)
        #expect(page.layoutProblem?.hasPrefix("§2.2:") == true)
    }

    @Test func keysOutOfOrderAreFound() {
        #expect(leaf([1, 2, 3]).keyOrderProblem == nil)
        #expect(leaf([1, 3, 2]).keyOrderProblem?.hasPrefix("V3:") == true)
        #expect(leaf([1, 1]).keyOrderProblem != nil)
        #expect(leaf([1, 2, 3]).insertionOrderProblem(at: 1) == nil)
        #expect(leaf([1, 3, 2]).insertionOrderProblem(at: 1)?.hasPrefix("V3:") == true)
        #expect(leaf([2, 1, 3]).insertionOrderProblem(at: 1) != nil)
    }

    @Test func aPageThatWouldFailValidationIsFound() {
        let page = leaf([1, 2])
        #expect(page.structureProblem == nil)
        page.setSlot(1, 600)
        #expect(page.structureProblem?.hasPrefix("P1:") == true)
    }

    @Test func separatorsThatDoNotDivideASplitAreFound() {
        func problem(_ left: [UInt8], _ separator: [UInt8], _ right: [UInt8]) -> String? {
            left.withUnsafeBytes { left in
                separator.withUnsafeBytes { separator in
                    right.withUnsafeBytes { separatorProblem(left: left, separator: separator, right: $0) }
                }
            }
        }
        #expect(problem([1, 2], [1, 3], [1, 3, 9]) == nil)
        #expect(problem([1, 2], [1, 2], [1, 3])?.hasPrefix("B2:") == true)
        #expect(problem([1, 2], [1, 4], [1, 3]) != nil)
        #expect(problem([1, 2], [2], [1, 3]) != nil)
    }

    @Test func aCommitThatIsNotTheNextStateIsFound() {
        let previous = CommitState(transaction: 4, catalogRoot: 2, freeListHead: 0, pageCount: 10)
        let next = CommitState(transaction: 5, catalogRoot: 9, freeListHead: 0, pageCount: 12)
        #expect(next.successorProblem(of: previous) == nil)
        var skipped = next
        skipped.transaction = 6
        #expect(skipped.successorProblem(of: previous)?.hasPrefix("W2:") == true)
        var shrunk = next
        shrunk.pageCount = 9
        #expect(shrunk.successorProblem(of: previous) != nil)
        var rootPastTheEnd = next
        rootPastTheEnd.catalogRoot = 12
        #expect(rootPastTheEnd.successorProblem(of: previous) != nil)
    }

    @Test func pageImagesOutOfOrderOrUnsealedAreFound() {
        let state = CommitState(transaction: 3, catalogRoot: 1, freeListHead: 0, pageCount: 9)
        func sealed(_ number: UInt64) -> Page {
            let page = leaf([1])
            page.number = number
            page.seal(transaction: 3)
            return page
        }
        #expect(WriteAheadLog.pageImagesProblem([sealed(2), sealed(5)], commit: state) == nil)
        #expect(WriteAheadLog.pageImagesProblem([sealed(5), sealed(2)], commit: state)?.hasPrefix("§2.3:") == true)
        #expect(WriteAheadLog.pageImagesProblem([sealed(2), sealed(9)], commit: state) != nil)
        let otherTransaction = leaf([1])
        otherTransaction.number = 4
        otherTransaction.seal(transaction: 2)
        #expect(WriteAheadLog.pageImagesProblem([otherTransaction], commit: state)?.hasPrefix("P1:") == true)
    }

    /// A writer's own pages pass; a committed page, a double free and a page freed after
    /// the writer finished do not.
    @Test func theWritersOwnershipAndFreesAreChecked() throws {
        let database = try Database.open(
            at: "checks.db", options: .init(pageSize: 512, durability: .off, fileSystem: SimulatedFileSystem()))
        try database.write { try $0.openTree(named: "t").setValue([1], forKey: [1]) }
        #expect(throws: CancellationError.self) {
            try database.write { transaction in
                let core = transaction.core
                let writer = try #require(core.writer)
                let tree = try #require(try core.tree(named: "t"))
                let committed = try core.page(tree.root)
                #expect(writer.ownershipProblem(committed)?.hasPrefix("B4:") == true)
                let fresh = writer.allocate(.leaf)
                #expect(writer.ownershipProblem(fresh) == nil)
                #expect(writer.freeProblem(fresh.number) == nil)
                #expect(writer.freeProblem(0)?.hasPrefix("F2:") == true)
                #expect(writer.freeProblem(writer.pageCount) != nil)
                writer.free(fresh.number)
                if internalChecksEnabled {
                    #expect(writer.freeProblem(fresh.number)?.hasPrefix("F2:") == true)
                    writer.beginCommit()
                    #expect(writer.changeProblem(tree, catalog: core.catalog)?.hasPrefix("§2.4:") == true)
                    #expect(writer.changeProblem(core.catalog, catalog: core.catalog) == nil)
                }
                writer.freeListReturned = true
                #expect(writer.freeProblem(committed.number)?.hasPrefix("F1:") == true)
                writer.freeListReturned = false
                throw CancellationError()
            }
        }
    }

    /// The walk after a commit finds a tree whose leaf was put out of order behind the
    /// B+tree's back, a count that is not the tree's, and a path whose separators do not
    /// bound the key.
    @Test func brokenTreesAreFound() throws {
        let database = try Database.open(
            at: "checks.db", options: .init(pageSize: 512, durability: .off, fileSystem: SimulatedFileSystem()))
        #expect(throws: CancellationError.self) {
            try database.write { transaction in
                let tree = try transaction.openTree(named: "t")
                for key in 0..<40 { try tree.setValue([UInt8](repeating: 9, count: 20), forKey: [UInt8(key)]) }
                let core = transaction.core
                let writer = try #require(core.writer)
                #expect(core.treeShapeProblem(tree.state) == nil)
                #expect(core.changedTreesProblem == nil)
                // Putting key 39 again descends the rightmost path; then claim that path went
                // through the first child, below a separator the key is not below.
                try [UInt8(39)].withUnsafeBytes { key in
                    try core.put(tree.state, key: key, value: UnsafeRawBufferPointer(start: nil, count: 0))
                    #expect(writer.pathPages.count > 1)
                    #expect(core.pathProblem(writer, key: key) == nil)
                    writer.pathIndices[0] = 0
                    #expect(core.pathProblem(writer, key: key)?.hasPrefix("V3:") == true)
                }
                tree.state.count += 1
                #expect(core.treeShapeProblem(tree.state)?.hasPrefix("V6:") == true)
                tree.state.count -= 1
                let leaf = try [UInt8(0)].withUnsafeBytes {
                    try #require(try core.findLeaf(root: tree.state.root, key: $0)).leaf
                }
                let first = leaf.slot(0)
                leaf.setSlot(0, leaf.slot(1))
                leaf.setSlot(1, first)
                #expect(core.treeShapeProblem(tree.state)?.contains("V3: keys out of order") == true)
                throw CancellationError()
            }
        }
    }

    #if STORAGE_ENGINE_INTERNAL_CHECKS
        @Test func aWriteToASharedPageTraps() async {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let page = Page(size: 512)
                page.format(.leaf, number: 3)
                page.seal(transaction: 1)
                page.count = 1
            }
            .map { String(decoding: $0.standardErrorContent, as: UTF8.self) }
            .map { #expect($0.contains("internal check failed: B4: page 3 changed after it was shared")) }
        }

        @Test func aCommitOfAnUnorderedLeafTraps() async {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let files = SimulatedFileSystem()
                let database = try Database.open(
                    at: "checks.db", options: .init(pageSize: 512, durability: .off, fileSystem: files))
                try database.write { transaction in
                    let tree = try transaction.openTree(named: "t")
                    for key in 1...3 { try tree.setValue([], forKey: [UInt8(key)]) }
                    let leaf = try transaction.core.page(tree.state.root)
                    let first = leaf.slot(0)
                    leaf.setSlot(0, leaf.slot(1))
                    leaf.setSlot(1, first)
                }
            }
            .map { String(decoding: $0.standardErrorContent, as: UTF8.self) }
            .map {
                #expect($0.contains("internal check failed: tree \"t\" after a write: corrupt: V3: keys out of order"))
            }
        }

        @Test func aPageFreedTwiceTraps() async {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let database = try Database.open(
                    at: "checks.db", options: .init(pageSize: 512, durability: .off, fileSystem: SimulatedFileSystem()))
                try database.write { try $0.openTree(named: "t").setValue([1], forKey: [1]) }
                try database.write { transaction in
                    let writer = try #require(transaction.core.writer)
                    let root = try #require(try transaction.core.tree(named: "t")).root
                    writer.free(root)
                    writer.free(root)
                }
            }
            .map { String(decoding: $0.standardErrorContent, as: UTF8.self) }
            .map {
                #expect($0.contains("internal check failed: F2: page") && $0.contains("freed twice in one transaction"))
            }
        }
    #endif
}
