import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Builders for the test server's responses.
enum HTTPBinResponses {
    static func json(_ object: Any, status: HTTPResponse.Status = .ok, headers extra: [(String, String)] = [])
        -> Response
    {
        let data =
            (try? JSONSerialization.data(
                withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        return bytes(data + Data("\n".utf8), contentType: "application/json", status: status, headers: extra)
    }

    static func text(
        _ text: String, contentType: String = "text/plain; charset=utf-8", status: HTTPResponse.Status = .ok
    ) -> Response {
        bytes(Data(text.utf8), contentType: contentType, status: status)
    }

    static func bytes(
        _ data: Data, contentType: String?, status: HTTPResponse.Status = .ok, headers extra: [(String, String)] = []
    ) -> Response {
        var fields = HTTPFields()
        if let contentType { fields[.contentType] = contentType }
        for (name, value) in extra {
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        fields[.contentLength] = String(data.count)
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func empty(status: HTTPResponse.Status, headers extra: [(String, String)] = []) -> Response {
        bytes(Data(), contentType: nil, status: status, headers: extra)
    }

    static func redirect(to location: String, status: Int = 302) -> Response {
        empty(status: HTTPResponse.Status(code: status), headers: [("Location", location)])
    }

    static func notFound() -> Response {
        text("Not Found\n", status: .notFound)
    }

    static func badRequest(_ message: String) -> Response {
        text(message + "\n", status: .badRequest)
    }
}
