// Page-sized buffers, recycled. A small commit copies a handful of pages, and publishing
// them drops as many older images from the page cache: a 4 KiB block is past glibc's
// per-thread cache, so each `malloc` and `free` of one took a few hundred instructions
// (about a twentieth of a one-row commit). Freed buffers wait here for the next page of
// their size instead, up to `bytesPerSize` bytes per size; the rest go back to the system.
// A buffer's bytes are whatever its last page left: callers that ask for no zeroing
// overwrite every byte (Page.swift), as they did over fresh memory.

/// The process's spare page buffers, by page size (512 to 65,536 bytes, powers of two).
final class PageBufferPool: @unchecked Sendable {
    static let shared = PageBufferPool()
    /// The most bytes kept for one page size.
    static let bytesPerSize = 1 << 20
    private static let sizeClasses = 8

    private let lock = Lock()
    // Fixed storage, used under `lock` only: each size class a stack of `capacity(of:)`
    // slots from `bases[class]` in `slots`, `counts[class]` of them holding buffers. (Arrays
    // of arrays cost twice the instructions per take and give.)
    private let slots: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    private let bases: UnsafeMutablePointer<Int>
    private let counts: UnsafeMutablePointer<Int>

    init() {
        bases = .allocate(capacity: Self.sizeClasses)
        counts = .allocate(capacity: Self.sizeClasses)
        var total = 0
        for sizeClass in 0..<Self.sizeClasses {
            bases[sizeClass] = total
            counts[sizeClass] = 0
            total += Self.capacity(of: sizeClass)
        }
        slots = .allocate(capacity: total)
        slots.initialize(repeating: nil, count: total)
    }

    deinit {
        for sizeClass in 0..<Self.sizeClasses {
            for index in 0..<counts[sizeClass] { slots[bases[sizeClass] + index]?.deallocate() }
        }
        slots.deallocate()
        bases.deallocate()
        counts.deallocate()
    }

    /// A buffer of `size` bytes (16-byte aligned): a spare one, else a new one.
    @inline(__always)
    func take(size: Int) -> UnsafeMutableRawPointer {
        if let sizeClass = Self.sizeClass(size) {
            lock.lock()
            let count = counts[sizeClass]
            if count > 0 {
                counts[sizeClass] = count - 1
                let buffer = slots[bases[sizeClass] + count - 1]
                lock.unlock()
                if let buffer { return buffer }
            } else {
                lock.unlock()
            }
        }
        return .allocate(byteCount: size, alignment: 16)
    }

    /// Takes back `buffer` of `size` bytes (from ``take(size:)``): kept for the next page, or
    /// deallocated when the pool holds enough of its size.
    @inline(__always)
    func give(_ buffer: UnsafeMutableRawPointer, size: Int) {
        if let sizeClass = Self.sizeClass(size) {
            lock.lock()
            let count = counts[sizeClass]
            if count < Self.capacity(of: sizeClass) {
                slots[bases[sizeClass] + count] = buffer
                counts[sizeClass] = count + 1
                lock.unlock()
                return
            }
            lock.unlock()
        }
        buffer.deallocate()
    }

    /// How many spare buffers of `size` bytes the pool holds (for tests).
    func spareCount(size: Int) -> Int {
        guard let sizeClass = Self.sizeClass(size) else { return 0 }
        return lock.withLock { counts[sizeClass] }
    }

    /// The index of `size` among the size classes; nil for a size the pool does not keep.
    @inline(__always)
    private static func sizeClass(_ size: Int) -> Int? {
        guard size >= 512, size <= 65_536, size & (size - 1) == 0 else { return nil }
        return size.trailingZeroBitCount - 9
    }

    /// How many buffers of the size class `sizeClass` the pool keeps at most.
    @inline(__always)
    private static func capacity(of sizeClass: Int) -> Int { bytesPerSize >> (sizeClass + 9) }
}
