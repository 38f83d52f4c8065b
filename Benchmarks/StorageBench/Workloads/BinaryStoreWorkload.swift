// The object workloads on the binary store. Every save rewrites the whole
// file, so single-object saves cost O(store size) each: that number is the point of
// measuring it (the binary store suits small stores read whole).
import Foundation
import OpenCoreData

extension Workload {
    /// The object workloads on `NSBinaryStoreType`.
    static let storeBinary = Workload(
        name: "store/binary",
        summary: "object workloads on the binary store (100k objects; each save rewrites the file)"
    ) { bench in
        try StoreBench.run(type: NSBinaryStoreType, bench: bench)
    }
}
