// Recently parsed predicate formats. An app builds its predicates from a few format
// strings, once per query with new arguments (`NSPredicate(format: "id == %lld", id)`):
// each format is split into tokens and parsed into a template once, and a call binds its
// arguments into the template (PredicateTemplate.swift), or parses the cached tokens when
// the template cannot bind them. Bounded: emptied when full; long formats (generated
// ones) are never kept.
import Synchronization

enum PredicateFormatCache {
    /// What is kept of one format.
    struct Entry: Sendable {
        let tokens: [PredicateToken]
        /// Nil when the format does not parse or a placeholder shapes its tree.
        let template: PredicateTemplate?
    }

    private static let cache = Mutex<[String: Entry]>([:])
    /// Formats kept at most; an app uses a few dozen.
    static let limit = 256
    /// Formats longer than this (in UTF-8 bytes) are parsed every time.
    static let longestCachedFormat = 512

    /// The tokens and template of `format`, from the cache when it was parsed before.
    ///
    /// - Throws: the lexer's error for a malformed format (never cached).
    static func entry(of format: String) throws -> Entry {
        if let cached = cache.withLock({ $0[format] }) { return cached }
        var lexer = PredicateLexer(format)
        let tokens = try lexer.tokenize()
        guard format.utf8.count <= longestCachedFormat else { return Entry(tokens: tokens, template: nil) }
        let entry = Entry(tokens: tokens, template: PredicateParser.template(of: tokens))
        cache.withLock { cache in
            if cache.count >= limit { cache.removeAll(keepingCapacity: true) }
            cache[format] = entry
        }
        return entry
    }
}
