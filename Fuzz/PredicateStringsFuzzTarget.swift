// Stored-string evaluation of the string operators under every option ([c], [d], [cd],
// [n] and none) over random Unicode — NULs, CR LF, combining marks, ligatures, case
// mappings that change length. Each iteration takes one random operator and pattern
// and several subjects; every subject must get the oracle's answer
// (`StringOperatorOracle`) through the constant, variable, compiled and key-value paths,
// and a fetch from each store (saved rows tested by the store — the default store on
// the encoded bytes — unsaved ones by the context) must return exactly those subjects.
import Foundation
import OpenCoreData
import TestSupport

extension FuzzTarget {
    /// String operators on stored strings against the oracle, through every path and store.
    static let predicateStrings = FuzzTarget(
        name: "predicate-strings",
        summary: "string operators with [c]/[d]/[cd]/[n] on random Unicode: every path and store against an oracle"
    ) { random in
        let first = StringOperatorCase.random(&random)
        var subjects = [first.subject]
        for _ in 0..<random.int(in: 2...6) {
            subjects.append(StringOperatorCase.random(&random).subject)
        }
        if random.chance(0.3) { subjects.append(first.pattern) }
        var wanted: [String] = []
        var thrown = false
        for subject in subjects {
            let testCase = StringOperatorCase(
                subject: subject, pattern: first.pattern, operation: first.operation, options: first.options)
            if let disagreement = testCase.disagreement() { throw FuzzFailure(description: disagreement) }
            switch testCase.answers()[0].answer {
            case .success(true): wanted.append(subject)
            case .success(false): break
            case .failure: thrown = true
            }
        }
        let unsavedCount = random.int(in: 0...2)
        let predicate = first.predicate(key: "payload")
        // The binary store syncs its whole file on every save: checked on one iteration in ten.
        let stacks = try StringStores.all().filter { $0.storeType != NSBinaryStoreType || random.chance(0.1) }
        for stack in stacks {
            try stack.replaceRows(with: Array(subjects.dropLast(unsavedCount)), unsaved: subjects.suffix(unsavedCount))
            let fetched = Result { try stack.fetchPayloads(predicate) }
            switch fetched {
            case .success(let payloads) where !thrown && payloads.sorted() == wanted.sorted(): continue
            case .failure where thrown: continue
            default:
                throw FuzzFailure(
                    description: "\(first.operatorText) \(first.pattern.debugDescription) on \(stack.storeType) over "
                        + "\(subjects.map(\.debugDescription)): fetched \(fetched), wanted \(wanted)")
            }
        }
    }
}

/// One stack per store type, made on first use and reused by every iteration (the fuzzer
/// runs iterations one after another on one thread).
private enum StringStores {
    nonisolated(unsafe) static var stacks: [StringStoreStack] = []

    static func all() throws -> [StringStoreStack] {
        if stacks.isEmpty {
            stacks = try [NSInMemoryStoreType, NSSQLiteStoreType, NSBinaryStoreType].map {
                try StringStoreStack(storeType: $0)
            }
            atexit { for stack in StringStores.stacks { stack.close() } }
        }
        return stacks
    }
}
