// Token lists of recently parsed predicate formats. An app builds its predicates from a
// few format strings, once per query with new arguments (`NSPredicate(format: "id ==
// %lld", id)`): each format is split into tokens once, and only the parse that binds
// that call's arguments runs per call. Bounded: emptied when full; long formats
// (generated ones) are never kept.
import Synchronization

enum PredicateTokenCache {
    private static let cache = Mutex<[String: [PredicateToken]]>([:])
    /// Formats kept at most; an app uses a few dozen.
    static let limit = 256
    /// Formats longer than this (in UTF-8 bytes) are tokenized every time.
    static let longestCachedFormat = 512

    /// The tokens of `format`, from the cache when it was tokenized before.
    ///
    /// - Throws: the lexer's error for a malformed format (never cached).
    static func tokens(of format: String) throws -> [PredicateToken] {
        if let cached = cache.withLock({ $0[format] }) { return cached }
        var lexer = PredicateLexer(format)
        let tokens = try lexer.tokenize()
        guard format.utf8.count <= longestCachedFormat else { return tokens }
        cache.withLock { cache in
            if cache.count >= limit { cache.removeAll(keepingCapacity: true) }
            cache[format] = tokens
        }
        return tokens
    }
}
