/// The web console that subd serves on its WebSocket listeners (issue 24; `web_console`): the page
/// (`clients/console/`) and the JavaScript client (`clients/js/subd.js`), built into the binary by the
/// `EmbedWebConsole` plugin from those files, so there is nothing to install and nothing fetched from elsewhere.
public enum WebConsole {
    /// One file as served.
    public struct File: Sendable {
        /// The path it is served at: `/`, `/console.js`, `/console.css`, `/subd.js`.
        public let path: String
        /// The file it was built from (`index.html`, ...).
        public let name: String
        /// `Content-Type`.
        public let contentType: String
        /// Its bytes as built. In the page (`/`) the text ``webSocketPathPlaceholder`` stands where the listener's
        /// WebSocket path goes (``page(webSocketPath:)``).
        public let bytes: [UInt8]
    }

    /// Every file, in the order of the plugin's list.
    public static let files: [File] = WebConsoleFiles.all.map { entry in
        File(
            path: entry.path, name: entry.name, contentType: contentType(of: entry.name), bytes: Array(entry.text.utf8))
    }

    /// What the page holds where the WebSocket path of the listener serving it goes.
    public static let webSocketPathPlaceholder = "%SUBD_WS_PATH%"

    /// The file served at `path` (the path of a request target, without its query); nil for any other.
    public static func file(at path: Substring) -> File? {
        files.first { $0.path == path }
    }

    /// The page's bytes for a listener whose WebSocket path is `webSocketPath` (HTML-escaped where it goes).
    public static func page(webSocketPath: String) -> [UInt8] {
        guard let page = file(at: "/") else { return [] }
        let escaped = webSocketPath.replacing("&", with: "&amp;").replacing("\"", with: "&quot;")
            .replacing("<", with: "&lt;").replacing(">", with: "&gt;")
        return Array(
            String(decoding: page.bytes, as: UTF8.self).replacing(webSocketPathPlaceholder, with: escaped).utf8)
    }

    /// The `Content-Type` of a file by its name's extension.
    static func contentType(of name: String) -> String {
        if name.hasSuffix(".html") { return "text/html; charset=utf-8" }
        if name.hasSuffix(".js") { return "text/javascript; charset=utf-8" }
        if name.hasSuffix(".css") { return "text/css; charset=utf-8" }
        return "application/octet-stream"
    }
}
