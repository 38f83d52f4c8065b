// A reference that reads nil once its target is gone, without a `weak` variable.
//
// The Swift runtime gives every object that is the target of a `weak` reference a side
// table, and from then on every retain and release of that object takes the runtime's
// slow path (~50-70 instructions instead of a few). Entities, relationships and models
// are retained for every object a context creates, fetches or decodes, so their back
// references (`property.entity`, `destinationEntity`, `superentity`, ...) do not use
// `weak`: the referrer holds a strong reference to a small handle that the target owns
// and empties in its deinit.
//
// A read takes the handle's lock and *tries* to retain the target: the try fails once
// the target's last release has started its deinit, and the deinit cannot free the
// target before it has emptied the handle under the same lock, so a read racing with the
// last release answers nil exactly as a `weak` read would, on any thread.
import Foundation
import Synchronization

/// Increments an object's strong count unless its deinit has begun, returning the object
/// (nil when it is going): the Swift runtime's `HeapObject *swift_tryRetain(HeapObject *)`,
/// not exposed to Swift, so found by name once (a C function, called with the C
/// convention). Nil where the runtime's symbols are not
/// exported (a statically linked runtime): a read then retains plainly, which differs
/// only when it races with the target's last release on another thread.
private let runtimeTryRetain: (@convention(c) (UnsafeRawPointer) -> UnsafeRawPointer?)? = {
    guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "swift_tryRetain") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (UnsafeRawPointer) -> UnsafeRawPointer?).self)
}()

/// A reference to `Target` that reads nil once the target is deallocated: the target
/// owns it, attaches itself in its initializer, hands it to its referrers and calls
/// ``clear()`` from its deinit.
final class WeakHandle<Target: AnyObject>: Sendable {
    /// The target's address while it lives, 0 before it attaches and once its deinit has begun.
    private let address = Mutex<UInt>(0)

    /// An empty handle: the target attaches itself once initialized.
    init() {}

    /// Makes the handle name `target`; call from the target's initializer, after `super.init()`.
    func attach(_ target: Target) {
        let address = UInt(bitPattern: Unmanaged.passUnretained(target).toOpaque())
        self.address.withLock { $0 = address }
    }

    /// The target, or nil once it is gone.
    var target: Target? {
        let retained = address.withLock { address -> UInt in
            guard let pointer = UnsafeRawPointer(bitPattern: address) else { return 0 }
            guard let runtimeTryRetain else {
                _ = Unmanaged<Target>.fromOpaque(pointer).retain()
                return address
            }
            return runtimeTryRetain(pointer) == nil ? 0 : address
        }
        guard let pointer = UnsafeRawPointer(bitPattern: retained) else { return nil }
        return Unmanaged<Target>.fromOpaque(pointer).takeRetainedValue()
    }

    /// Empties the handle: the target's deinit calls this first.
    func clear() {
        address.withLock { $0 = 0 }
    }
}
