/// An HTTP/1.1 response of the metrics endpoint, before it is encoded. Every one closes the connection
/// (`Connection: close`) and says its length (`Content-Length`).
struct HTTPResponse: Equatable {
    /// The status code, e.g. 200.
    var status: Int
    /// The reason phrase, e.g. `OK`.
    var reason: String
    /// Fields besides `Content-Length` and `Connection`.
    var fields: [HTTPRequestHead.Field] = []
    /// The content.
    var body: [UInt8]
    /// False for an answer to `HEAD`: the length is the body's, the body is not sent.
    var sendsBody = true

    /// The bytes to write.
    func encoded() -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(reason)\r\n"
        for field in fields { head += "\(field.name): \(field.value)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + (sendsBody ? body : [])
    }

    /// A plain-text response.
    static func text(
        _ status: Int, _ reason: String, _ text: String, fields: [HTTPRequestHead.Field] = []
    ) -> HTTPResponse {
        HTTPResponse(
            status: status, reason: reason,
            fields: [.init(name: "Content-Type", value: "text/plain; charset=utf-8")] + fields,
            body: Array(text.utf8))
    }
}

/// What the metrics endpoint answers: `GET /metrics` (and `HEAD`) the exposition, every other path 404, another
/// method on `/metrics` 405, and a head that cannot be served its 4xx or 505.
enum MetricsRoute {
    /// The one path served.
    static let path = "/metrics"

    /// The answer to a complete head; `exposition` is called only for `GET` or `HEAD /metrics`.
    static func response(to head: HTTPRequestHead, exposition: () -> [UInt8]) -> HTTPResponse {
        guard head.path == path else {
            return .text(404, "Not Found", "not found: subd serves GET \(path) only\n")
        }
        guard head.method == "GET" || head.method == "HEAD" else {
            return .text(
                405, "Method Not Allowed", "method not allowed: \(path) takes GET or HEAD\n",
                fields: [.init(name: "Allow", value: "GET, HEAD")])
        }
        return HTTPResponse(
            status: 200, reason: "OK", fields: [.init(name: "Content-Type", value: MetricsExposition.contentType)],
            body: exposition(), sendsBody: head.method == "GET")
    }

    /// The answer to a head that cannot be served.
    static func response(to error: HTTPRequestHeadError) -> HTTPResponse {
        switch error {
        case .malformed(let reason): .text(400, "Bad Request", "bad request: \(reason)\n")
        case .tooLarge: .text(431, "Request Header Fields Too Large", "the request head is too large\n")
        case .unsupportedVersion: .text(505, "HTTP Version Not Supported", "only HTTP/1.x is served\n")
        }
    }

    /// The answer to a request that did not arrive whole in time.
    static let timeout = HTTPResponse.text(408, "Request Timeout", "the request did not arrive in time\n")

    /// The answer when too many metrics connections are open.
    static let busy = HTTPResponse.text(503, "Service Unavailable", "too many metrics connections; try again\n")
}
