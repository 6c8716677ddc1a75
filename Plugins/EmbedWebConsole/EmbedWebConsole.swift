import Foundation
import PackagePlugin

/// Builds the web console's files into `SubscriptionWebConsole` (issue 24): the JavaScript client
/// (`clients/js/subd.js`) and the console page (`clients/console/`) become string constants of a generated Swift file,
/// so subd serves them with nothing to install and no copy of them in the repository to fall out of step.
@main
struct EmbedWebConsole: BuildToolPlugin {
    /// Each file served, by the path it is served at.
    static let files = [
        ("/", "clients/console/index.html"),
        ("/console.js", "clients/console/console.js"),
        ("/console.css", "clients/console/console.css"),
        ("/subd.js", "clients/js/subd.js"),
    ]

    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let tool = try context.tool(named: "embed-web-files")
        let root = context.package.directoryURL
        let inputs = Self.files.map { root.appending(path: $0.1) }
        let output = context.pluginWorkDirectoryURL.appending(path: "WebConsoleFiles.swift")
        let arguments = [output.path] + zip(Self.files, inputs).map { "\($0.0.0)=\($0.1.path)" }
        return [
            .buildCommand(
                displayName: "Embedding the web console's files", executable: tool.url, arguments: arguments,
                inputFiles: inputs, outputFiles: [output])
        ]
    }
}
