import Foundation

/// A C library of test tooling that the tests preload into subd (`LD_PRELOAD`): `Tests/<name>/<name>.c` (with
/// `Tests/<name>/include` when there is one), built here with the C compiler (`cc`) once per test process, into a
/// temporary folder. Test tooling, not a product of the package: a library product with the linker settings it needs
/// would keep subd from being a versioned dependency.
enum PreloadLibrary {
    /// libAllocationCounter.so (AllocationBudgetTests).
    static let allocationCounter = Result { try build("AllocationCounter") }
    /// libStateFaults.so (StateSavingFailureTests).
    static let stateFaults = Result { try build("StateFaults") }

    /// Builds `lib<name>.so`; throws when `cc` fails.
    private static func build(_ name: String) throws -> URL {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../\(name)").standardized
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("subd-\(name)-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let library = folder.appendingPathComponent("lib\(name).so")
        let include = source.appendingPathComponent("include")
        var arguments = ["cc", "-shared", "-fPIC", "-O2", "-Wall"]
        if FileManager.default.fileExists(atPath: include.path) { arguments += ["-I", include.path] }
        arguments += ["-o", library.path, source.appendingPathComponent("\(name).c").path, "-ldl"]
        try ExternalTool.run(arguments, timeout: 120)
        return library
    }
}
