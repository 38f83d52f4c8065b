// The class an entity of a model file names: `representedClassName` as Xcode writes
// it, turned into the name `NSStringFromClass` gives ("Module.Class").
//
// Xcode writes ".Employee" for a class in the "Current Product Module", which momc
// replaces with the app's module name when it compiles the model. Here the model is read
// at run time, so the app's module is the main executable's: its file name with the
// characters a module name cannot hold replaced by "_" (SwiftPM names an executable
// target's module the same way).
import Foundation

enum ModelClassName {
    /// The module a leading "." in `representedClassName` stands for: the main executable's.
    static let productModuleName: String = {
        let path = Bundle.main.executableURL ?? CommandLine.arguments.first.map { URL(fileURLWithPath: $0) }
        return moduleName(forExecutable: path?.lastPathComponent ?? "main")
    }()

    /// The module name SwiftPM gives an executable named `name` ("my-app" is "my_app").
    static func moduleName(forExecutable name: String) -> String {
        var base = Substring(name)
        for suffix in [".xctest", ".exe"] where base.hasSuffix(suffix) { base = base.dropLast(suffix.count) }
        var result = String(
            base.unicodeScalars.map { scalar -> Character in
                scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_"
                    ? Character(scalar) : "_"
            })
        if result.isEmpty || result.first?.isNumber == true { result = "_" + result }
        return result
    }

    /// The managed object class name for `representedClassName`.
    ///
    /// - nil or empty: `NSManagedObject`.
    /// - ".Name": `module.Name`.
    /// - "Module.Name": itself.
    /// - "Name": itself when a class of that name exists, else `module.Name` when that
    ///   class exists (the app's own classes, which Core Data finds through `@objc(Name)`),
    ///   else itself (objects of the entity are then `NSManagedObject`s, as in Core Data
    ///   when the class is missing).
    static func resolve(_ representedClassName: String?, module: String) -> String {
        guard let name = representedClassName, !name.isEmpty else { return "NSManagedObject" }
        if name.hasPrefix(".") { return module + name }
        if name.contains(".") || name == "NSManagedObject" || NSClassFromString(name) is NSManagedObject.Type {
            return name
        }
        let qualified = "\(module).\(name)"
        return NSClassFromString(qualified) is NSManagedObject.Type ? qualified : name
    }
}
