// Stable digests for version hashes: the same description always gives the same
// bytes, on every platform and run. Not cryptographic; it detects model changes.
// Stores record these bytes in their metadata, so the components and the digest are an
// on-disk format: SPEC.md §3.10, pinned by VersionHashTests.
import Foundation

enum VersionHash {
    /// 32 bytes from four independently seeded 64-bit FNV-1a passes over the components.
    static func digest(_ components: [String]) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for seed in 0..<4 as Range<UInt64> {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ (seed &* 0x9E37_79B9_7F4A_7C15)
            for component in components {
                for byte in component.utf8 {
                    hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
                }
                // A separator byte that cannot occur in UTF-8 keeps ["ab","c"] apart from ["a","bc"].
                hash = (hash ^ 0xFF) &* 0x100_0000_01b3
            }
            for shift in stride(from: 0, to: 64, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: hash >> UInt64(shift)))
            }
        }
        return Data(bytes)
    }

    /// The version checksum of a model whose entities have `hashes` (SPEC.md §3.10 V6): a
    /// store's recorded hashes give the checksum of the model that wrote it.
    static func checksum(of hashes: [String: Data]) -> String {
        var components = ["model"]
        for (name, hash) in hashes.sorted(by: { $0.key < $1.key }) {
            components += [name, hash.base64EncodedString()]
        }
        return digest(components).base64EncodedString()
    }

    /// A Boolean component.
    static func flag(_ value: Bool) -> String { value ? "1" : "0" }

    // MARK: The first hashes (before model files)

    // Stores written before the hashes followed Core Data's documented inputs recorded
    // these; a model whose first-form hashes equal a store's still opens it (SPEC.md
    // §3.10, V5).

    /// The entity hashes of `model` in their first form.
    static func firstFormHashes(of model: NSManagedObjectModel) -> [String: Data] {
        var result: [String: Data] = [:]
        for entity in model.entities {
            guard let name = entity.name else { continue }
            var components = [name, String(entity.isAbstract), entity.superentity?.name ?? ""]
            components.append(entity.versionHashModifier ?? "")
            for property in entity.properties.sorted(by: { $0.name < $1.name }) where !property.isTransient {
                components.append(firstFormHash(of: property).base64EncodedString())
            }
            result[name] = digest(components)
        }
        return result
    }

    private static func firstFormHash(of property: NSPropertyDescription) -> Data {
        var components = [
            property.name, String(property.isOptional), String(property.isTransient),
            property.versionHashModifier ?? "",
        ]
        if let attribute = property as? NSAttributeDescription {
            components += ["attribute", String(attribute.attributeType.rawValue), attribute.valueTransformerName ?? ""]
        } else if let relationship = property as? NSRelationshipDescription {
            components += [
                "relationship", relationship.destinationEntity?.name ?? "",
                relationship.inverseRelationship?.name ?? "",
                String(relationship.minCount), String(relationship.maxCount), String(relationship.isOrdered),
            ]
        }
        return digest(components)
    }
}
