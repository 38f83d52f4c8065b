import Testing

@testable import StorageEngine

#if canImport(Glibc)
    import Glibc
#endif

/// Recycled page buffers (PageBufferPool.swift): a buffer given back serves the next page
/// of its size, the pool keeps at most its byte budget per size, and a page asked to be
/// zeroed is zeroed whatever its recycled buffer held.
@Suite struct PageBufferPoolTests {
    @Test func aGivenBackBufferServesTheNextPageOfItsSize() {
        let pool = PageBufferPool()
        let buffer = pool.take(size: 4_096)
        pool.give(buffer, size: 4_096)
        #expect(pool.spareCount(size: 4_096) == 1)
        #expect(pool.spareCount(size: 8_192) == 0)
        #expect(pool.take(size: 8_192) != buffer)
        #expect(pool.take(size: 4_096) == buffer)
        #expect(pool.spareCount(size: 4_096) == 0)
        pool.give(buffer, size: 4_096)
    }

    @Test func thePoolKeepsAtMostItsBudgetPerSize() {
        let pool = PageBufferPool()
        for size in [512, 4_096, 65_536] {
            let kept = PageBufferPool.bytesPerSize / size
            let buffers = (0..<(kept + 3)).map { _ in pool.take(size: size) }
            for buffer in buffers { pool.give(buffer, size: size) }
            #expect(pool.spareCount(size: size) == kept, "page size \(size)")
        }
        // A size no page has is never kept.
        pool.give(pool.take(size: 3_000), size: 3_000)
        #expect(pool.spareCount(size: 3_000) == 0)
    }

    @Test func aZeroedPageOnARecycledBufferIsZero() {
        for _ in 0..<50 {
            let used = Page(size: 4_096, zeroed: false)
            memset(used.bytes, 0xA5, 4_096)
            _ = consume used
            let page = Page(size: 4_096)
            let bytes = UnsafeRawBufferPointer(start: page.bytes, count: 4_096)
            #expect(bytes.allSatisfy { $0 == 0 })
        }
    }
}
