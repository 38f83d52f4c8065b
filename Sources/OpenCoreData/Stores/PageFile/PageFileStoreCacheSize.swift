// How much memory the default store's page cache may take: a store option, with a
// default small enough that a store of any size (an import of millions of objects)
// stays in bounded memory, and large enough that a store of a few hundred thousand
// objects is read from memory after its first pass.
import Foundation
import StorageEngine

/// Store option: the bytes of pages the default store keeps in memory, an `Int` or
/// `NSNumber` (``PageFileStore/defaultCacheSize``, 32 MiB, when absent; at least 64
/// pages are kept whatever it says). Pages beyond it are read again from the file (the
/// operating system's cache) when needed. Coordinators of one process that share a
/// file share one cache, sized by the first to open it.
///
/// ```swift
/// description.setOption(64 << 20 as NSNumber, forKey: PageFileStoreCacheSizeOption)
/// ```
public let PageFileStoreCacheSizeOption = "OpenCoreDataCacheSizeOption"

extension PageFileStore {
    /// The page cache of a default store added without ``PageFileStoreCacheSizeOption``:
    /// 32 MiB, 8,192 pages of 4 KiB.
    public static let defaultCacheSize = 32 << 20

    /// The cache size `value` asks for (the option's value), or the default when absent.
    ///
    /// - Throws: `NSPersistentStoreOpenError` when it is not a whole number of bytes
    ///   above zero.
    static func cacheSize(_ value: Any?) throws -> Int {
        guard let value else { return defaultCacheSize }
        let bytes: Int?
        switch value {
        case let number as Int: bytes = number
        case let number as NSNumber where number.doubleValue == number.doubleValue.rounded():
            bytes = Int(exactly: number.doubleValue)
        default: bytes = nil
        }
        guard let bytes, bytes > 0 else {
            throw CoreDataError.make(
                NSPersistentStoreOpenError,
                "\(PageFileStoreCacheSizeOption) is \(value): it takes a number of bytes above zero (an Int or "
                    + "NSNumber)")
        }
        return bytes
    }
}
