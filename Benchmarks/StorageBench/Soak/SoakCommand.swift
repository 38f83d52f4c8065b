import Foundation

enum SoakCommand {
    static func run(_ arguments: [String]) throws(CommandLineError) -> Int32 { 0 }
}

enum SoakChild {
    static func run(_ arguments: [String]) -> Int32 { 0 }
}
