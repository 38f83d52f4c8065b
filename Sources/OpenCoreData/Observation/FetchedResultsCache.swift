// The persistent section cache of a results controller with a cacheName (SPEC.md,
// "Fetched results controller cache"): the section names and counts of the last fetch,
// in a file per cache name, reused while the request and the stores are unchanged.
//
// A cache file is JSON (keys sorted):
//
//   KEY          VALUE
//   format       1
//   request      what the sections depend on: entity, predicate, sort descriptors,
//                section name key path, limit and offset, subentities
//   stores       for each store: type, identifier, and the size and modification time
//                of its file and write-ahead log (a save changes one of them)
//   sections     [{ "name": String, "count": Int }] in order
//
// A cache is used only when its request and stores match exactly and its counts add up
// to the fetched results; it is written only when the context (and its ancestors) hold
// no unsaved changes, so it always describes stored data. The in-memory store has no
// file to date, so its controllers keep no cache. A damaged or unreadable file is
// ignored and replaced. Core Data keeps these files in the app's Caches directory; here
// it is the user's caches directory (`$XDG_CACHE_HOME` or `~/.cache` on Linux).
import Foundation

/// The cache of one cache name, for one fetch of a tracker.
struct FetchedResultsCache {
    /// The encoded file.
    struct File: Codable, Equatable {
        var format = 1
        var request: String
        var stores: [String]
        var sections: [Section]

        struct Section: Codable, Equatable {
            var name: String
            var count: Int
        }

        /// The file's bytes (keys sorted, so equal contents encode equally).
        func encoded() throws -> Data {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return try encoder.encode(self)
        }
    }

    let url: URL
    let request: String
    let stores: [String]

    /// The cache named `name` for `tracker`'s request of `entity`; nil when its stores
    /// cannot be dated (the in-memory store) or the context is a child context.
    init?(name: String, tracker: FetchedResultsTracker, entity: NSEntityDescription) {
        let context = tracker.context
        guard context.parent == nil, let coordinator = context.persistentStoreCoordinator,
            let stores = Self.storeStamps(coordinator.persistentStores)
        else { return nil }
        url = Self.url(forName: name)
        self.stores = stores
        let fetch = tracker.request
        request = [
            entity.name ?? "", fetch.predicate?.predicateFormat ?? "", (fetch.sortDescriptors ?? []).description,
            tracker.sectionNameKeyPath ?? "", "\(fetch.fetchLimit)", "\(fetch.fetchOffset)",
            "\(fetch.includesSubentities)", "\(fetch.includesPendingChanges)",
        ].joined(separator: "\u{1F}")
    }

    /// The cached sections, when the file matches the request and the stores as they are.
    func read() -> [(name: String, count: Int)]? {
        guard let data = try? Data(contentsOf: url), let file = try? JSONDecoder().decode(File.self, from: data),
            file.format == 1, file.request == request, file.stores == stores
        else { return nil }
        return file.sections.map { ($0.name, $0.count) }
    }

    /// Writes `sections`; a failure only means the next fetch reads them again.
    func write(_ sections: [(name: String, count: Int)]) {
        let file = File(
            request: request, stores: stores, sections: sections.map { .init(name: $0.name, count: $0.count) })
        guard let data = try? file.encoded() else { return }
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? data.write(to: url, options: .atomic)
    }

    /// The directory holding every cache file.
    static var directory: URL {
        let caches =
            FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        return caches.appendingPathComponent("OpenCoreData/FetchedResultsControllers", isDirectory: true)
    }

    /// The file of cache `name` (the name percent-encoded, so any name is one file name).
    static func url(forName name: String) -> URL {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-_.")
        let file = name.addingPercentEncoding(withAllowedCharacters: allowed) ?? "cache"
        return directory.appendingPathComponent(file + ".frc-cache")
    }

    /// Deletes cache `name`, or every cache when nil.
    static func delete(named name: String?) {
        if let name {
            try? FileManager.default.removeItem(at: url(forName: name))
        } else {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// What identifies the stores' contents now; nil when a store has no file to date.
    private static func storeStamps(_ stores: [NSPersistentStore]) -> [String]? {
        var stamps: [String] = []
        for store in stores {
            // A store at /dev/null lives in memory too.
            guard store.type != NSInMemoryStoreType, let url = store.url, url.isFileURL, url.path != "/dev/null"
            else { return nil }
            var stamp = "\(store.type) \(store.identifier ?? "")"
            for path in [url.path, url.path + "-wal"] {
                guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { continue }
                let size = (attributes[.size] as? NSNumber)?.int64Value ?? -1
                let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
                stamp += " \(size)@\(modified)"
            }
            stamps.append(stamp)
        }
        return stamps.isEmpty ? nil : stamps
    }
}
