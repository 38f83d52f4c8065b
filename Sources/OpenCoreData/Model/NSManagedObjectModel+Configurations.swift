// Configurations: named subsets of a model's entities, as Xcode's model editor defines them.
import Foundation

extension NSManagedObjectModel {
    /// The name Core Data gives the configuration holding every entity.
    static let defaultConfigurationName = "PF_DEFAULT_CONFIGURATION_NAME"

    /// The names of the model's named configurations, sorted.
    ///
    /// The default configuration (every entity, named by nil) is not listed, as in Core Data.
    public var configurations: [String] { configurationEntities.keys.sorted() }

    /// The entities of the configuration `configuration`: every entity for nil (the
    /// default configuration), nil for a name the model does not have.
    ///
    /// Stores added with a configuration still hold any entity: a configuration
    /// describes the model, it does not partition the rows yet.
    public func entities(forConfigurationName configuration: String?) -> [NSEntityDescription]? {
        guard let configuration, configuration != NSManagedObjectModel.defaultConfigurationName else {
            return entities
        }
        return configurationEntities[configuration]
    }

    /// Makes `entities` the configuration named `configuration` (an entity may belong to
    /// several configurations).
    ///
    /// - Precondition: no coordinator uses the model yet.
    public func setEntities(_ entities: [NSEntityDescription], forConfigurationName configuration: String) {
        assertEditable()
        configurationEntities[configuration] = entities
    }
}
