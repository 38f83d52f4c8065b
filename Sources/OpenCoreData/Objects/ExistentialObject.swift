// The object in an `Any?` whose static type is a given class, read in place.
//
// `NSObject`'s `==` (which Set and Dictionary use for managed objects and object IDs)
// calls `isEqual(_:)` with the other side typed `NSObject` and wrapped in `Any?`. Binding
// or opening that optional copied the existential (a value-witness call and a retain and
// release of the object) on every probe of every set or dictionary of them: about 200
// instructions per comparison. Swift's existential container is three words of inline
// buffer and the type's metadata pointer (null for nil); a class reference sits in the
// first word. When the metadata is exactly the class asked for, the reference is read
// there without a copy; any other form goes the general way.
import Foundation

/// The address of the object `value` holds when its static type is exactly `type`;
/// nil for nil and for any other static type (the caller then casts).
@inline(__always)
func objectAddress(in value: borrowing Any?, typedAs type: AnyClass) -> UnsafeRawPointer? {
    guard MemoryLayout<Any?>.size == 4 * MemoryLayout<UnsafeRawPointer>.size else { return nil }
    return withUnsafePointer(to: value) { pointer in
        let container = UnsafeRawPointer(pointer)
        let metadata = container.load(
            fromByteOffset: 3 * MemoryLayout<UnsafeRawPointer>.size, as: UnsafeRawPointer?.self)
        guard let metadata, metadata == unsafeBitCast(type, to: UnsafeRawPointer.self) else { return nil }
        return container.load(as: UnsafeRawPointer?.self)
    }
}
