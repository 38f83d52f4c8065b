// The ordered list a results controller keeps: managed objects in sort order, with the
// position of any object found by identity, and inserts and removals anywhere, each in
// O(log n). An array would make every insert and removal move the tail (O(n)); finding
// where a changed object *was* cannot use its sort keys, which already hold new values.
//
// It is a treap — a binary search tree by position whose nodes also carry a random
// priority kept in heap order (a parent's priority is at least its children's), which
// keeps the expected depth O(log n) whatever the order of inserts — where every node
// knows its subtree's size (so position i is found going down, and a node's position
// going up) and its parent. A dictionary maps each object (by identity) to its node.
//
// Invariants, checked by `checkInvariants()` in tests:
//   (1) in-order traversal is the list;
//   (2) node.size == 1 + size(left) + size(right);
//   (3) child.parent === node for each child, root.parent == nil;
//   (4) priority(child) <= priority(node);
//   (5) nodes[ObjectIdentifier(node.object)] === node for every node, and nothing else.
//
// Priorities come from a fixed-seed generator, so runs are repeatable.
import Foundation

/// Managed objects in order, addressed by position or by the object itself.
final class RankedObjectList {
    /// One object of the list.
    final class Node {
        let object: NSManagedObject
        /// The caller's tie-breaker: the list's users order objects whose sort keys tie by it.
        let sequence: Int
        fileprivate let priority: UInt64
        fileprivate var size = 1
        fileprivate var left: Node?
        fileprivate var right: Node?
        // Children are held strongly by their parent (the root by the list); a node leaves
        // the tree only through `remove(_:)`, which clears this link, so it never dangles.
        fileprivate unowned(unsafe) var parent: Node?

        fileprivate init(object: NSManagedObject, sequence: Int, priority: UInt64) {
            self.object = object
            self.sequence = sequence
            self.priority = priority
        }
    }

    private var root: Node?
    private var nodes: [ObjectIdentifier: Node] = [:]
    private var random = SplitMix64(seed: 0x5EED_F7C0_11EC_7ED5)

    /// An empty list.
    init() {}

    /// The list of `objects`, in their order (each object at most once), with `sequences`
    /// (one per object; by default their positions).
    ///
    /// - Complexity: O(n): the tree is built along its right spine.
    init(_ objects: [NSManagedObject], sequences: [Int]? = nil) {
        nodes.reserveCapacity(objects.count)
        var spine: [Node] = []
        for (position, object) in objects.enumerated() {
            let sequence = sequences.map { $0[position] } ?? position
            let node = Node(object: object, sequence: sequence, priority: random.next())
            nodes[ObjectIdentifier(object)] = node
            var last: Node?
            while let top = spine.last, top.priority < node.priority {
                last = spine.removeLast()
            }
            node.left = last
            last?.parent = node
            if let top = spine.last {
                top.right = node
                node.parent = top
            }
            spine.append(node)
        }
        root = spine.first
        computeSizes()
    }

    /// Sets every node's size, children before parents (no recursion: the tree may be deep).
    private func computeSizes() {
        guard let root else { return }
        var stack: [(Node, Bool)] = [(root, false)]
        while let (node, childrenDone) = stack.popLast() {
            if childrenDone {
                node.size = 1 + Self.size(node.left) + Self.size(node.right)
                continue
            }
            stack.append((node, true))
            if let left = node.left { stack.append((left, false)) }
            if let right = node.right { stack.append((right, false)) }
        }
    }

    private static func size(_ node: Node?) -> Int { node?.size ?? 0 }

    /// How many objects the list holds.
    var count: Int { Self.size(root) }

    /// The node of `object`, when it is in the list.
    func node(for object: NSManagedObject) -> Node? {
        nodes[ObjectIdentifier(object)]
    }

    /// Whether `object` is in the list.
    func contains(_ object: NSManagedObject) -> Bool {
        nodes[ObjectIdentifier(object)] != nil
    }

    /// The position of `node`.
    ///
    /// - Complexity: O(log n) expected.
    func position(of node: Node) -> Int {
        var position = Self.size(node.left)
        var current = node
        while let parent = current.parent {
            if parent.right === current { position += Self.size(parent.left) + 1 }
            current = parent
        }
        return position
    }

    /// The object at `position` (in `0..<count`).
    ///
    /// - Complexity: O(log n) expected.
    func object(at position: Int) -> NSManagedObject {
        precondition(position >= 0 && position < count, "OpenCoreData: position \(position) outside 0..<\(count)")
        var node = root.unsafelyUnwrapped
        var remaining = position
        while true {
            let leftSize = Self.size(node.left)
            if remaining < leftSize {
                node = node.left.unsafelyUnwrapped
            } else if remaining == leftSize {
                return node.object
            } else {
                remaining -= leftSize + 1
                node = node.right.unsafelyUnwrapped
            }
        }
    }

    /// The objects at `positions` (within `0..<count`), in order.
    ///
    /// - Complexity: O(log n + k) expected for k positions.
    func objects(in positions: Range<Int>) -> [NSManagedObject] {
        var result: [NSManagedObject] = []
        result.reserveCapacity(positions.count)
        guard !positions.isEmpty else { return result }
        // Walk down to the first position, keeping the path, then in order from there.
        var stack: [Node] = []
        var node = root
        var remaining = positions.lowerBound
        while let current = node {
            let leftSize = Self.size(current.left)
            if remaining < leftSize {
                stack.append(current)
                node = current.left
            } else if remaining == leftSize {
                stack.append(current)
                break
            } else {
                remaining -= leftSize + 1
                node = current.right
            }
        }
        while result.count < positions.count, let current = stack.popLast() {
            result.append(current.object)
            var next = current.right
            while let descend = next {
                stack.append(descend)
                next = descend.left
            }
        }
        return result
    }

    /// Every object, in order.
    ///
    /// - Complexity: O(n).
    var allObjects: [NSManagedObject] { objects(in: 0..<count) }

    /// Inserts `object` (not in the list) with `sequence` after every node that does not
    /// sort after it, `compare(node)` telling how `object` compares with a node's; returns
    /// its node.
    ///
    /// - Throws: what `compare` throws (the list is then unchanged).
    /// - Complexity: O(log n) expected comparisons.
    @discardableResult
    func insert(_ object: NSManagedObject, sequence: Int, comparingWith compare: (Node) throws -> ComparisonResult)
        throws -> Node
    {
        var parent: Node?
        var goesLeft = false
        var current = root
        while let node = current {
            parent = node
            goesLeft = try compare(node) == .orderedAscending
            current = goesLeft ? node.left : node.right
        }
        let node = Node(object: object, sequence: sequence, priority: random.next())
        nodes[ObjectIdentifier(object)] = node
        node.parent = parent
        if let parent {
            if goesLeft { parent.left = node } else { parent.right = node }
        } else {
            root = node
        }
        var ancestor = parent
        while let step = ancestor {
            step.size += 1
            ancestor = step.parent
        }
        while let up = node.parent, up.priority < node.priority { rotateUp(node) }
        return node
    }

    /// Removes `node` from the list.
    ///
    /// - Complexity: O(log n) expected.
    func remove(_ node: Node) {
        // Rotate the node down until it has at most one child, then splice it out.
        while let left = node.left, let right = node.right {
            rotateUp(left.priority > right.priority ? left : right)
        }
        let child = node.left ?? node.right
        let parent = node.parent
        child?.parent = parent
        if let parent {
            if parent.left === node { parent.left = child } else { parent.right = child }
        } else {
            root = child
        }
        var ancestor = parent
        while let step = ancestor {
            step.size -= 1
            ancestor = step.parent
        }
        node.left = nil
        node.right = nil
        node.parent = nil
        nodes[ObjectIdentifier(node.object)] = nil
    }

    /// Makes `node` the parent of its parent, keeping the in-order sequence.
    private func rotateUp(_ node: Node) {
        guard let parent = node.parent else { return }
        let grandparent = parent.parent
        if parent.left === node {
            parent.left = node.right
            parent.left?.parent = parent
            node.right = parent
        } else {
            parent.right = node.left
            parent.right?.parent = parent
            node.left = parent
        }
        parent.parent = node
        node.parent = grandparent
        if let grandparent {
            if grandparent.left === parent { grandparent.left = node } else { grandparent.right = node }
        } else {
            root = node
        }
        parent.size = 1 + Self.size(parent.left) + Self.size(parent.right)
        node.size = 1 + Self.size(node.left) + Self.size(node.right)
    }

    /// Checks the invariants of the file comment; a description of the first one broken.
    func checkInvariants() -> String? {
        var seen = 0
        var stack: [Node] = root.map { [$0] } ?? []
        if let root, root.parent != nil { return "the root has a parent" }
        while let node = stack.popLast() {
            seen += 1
            if node.size != 1 + Self.size(node.left) + Self.size(node.right) { return "a size is wrong" }
            for child in [node.left, node.right].compactMap({ $0 }) {
                if child.parent !== node { return "a parent link is wrong" }
                if child.priority > node.priority { return "priorities are out of heap order" }
                stack.append(child)
            }
            if nodes[ObjectIdentifier(node.object)] !== node { return "the object map misses a node" }
        }
        if seen != nodes.count { return "the object map holds \(nodes.count) nodes, the tree \(seen)" }
        return nil
    }
}

/// A small, fast, seeded generator (SplitMix64) for the list's priorities.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
