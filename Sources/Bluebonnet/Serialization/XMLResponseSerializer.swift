import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `ResponseSerializer` that parses the body into an `XMLDocument` (AFNetworking's XML document serializer). An
/// allowed empty body is an empty document.
public final class XMLResponseSerializer: ResponseSerializer {
    /// The value made: named, so one type answers for both data and download serialization.
    public typealias SerializedObject = XMLDocument

    /// The content types AFNetworking's XML serializers accept.
    public static let defaultAcceptableContentTypes: Set<String> = ["application/xml", "text/xml"]

    /// The preprocessor.
    public let dataPreprocessor: any DataPreprocessor
    /// HTTP response codes for which empty responses are allowed.
    public let emptyResponseCodes: Set<Int>
    /// `HTTPMethod`s for which empty responses are always valid.
    public let emptyRequestMethods: Set<HTTPMethod>
    /// Options for building the document.
    public let options: XMLNode.Options
    /// MIME types the body must have to be parsed; `nil` checks nothing.
    public let acceptableContentTypes: Set<String>?
    /// Status codes the response must have to be parsed; `nil` checks nothing.
    public let acceptableStatusCodes: IndexSet?

    /// Creates an instance with the provided values.
    ///
    /// - Parameters:
    ///   - dataPreprocessor:       `DataPreprocessor` used to prepare the received `Data` for serialization.
    ///   - emptyResponseCodes:     The HTTP response codes for which empty responses are allowed. `[204, 205]` by default.
    ///   - emptyRequestMethods:    The HTTP request methods for which empty responses are allowed. `[.head]` by default.
    ///   - options:                Options for building the `XMLDocument`. None by default.
    ///   - acceptableContentTypes: MIME types the body must have; `nil` (the default) checks nothing.
    ///   - acceptableStatusCodes:  Status codes the response must have; `nil` (the default) checks nothing.
    public init(
        dataPreprocessor: any DataPreprocessor = XMLResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = XMLResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = XMLResponseSerializer.defaultEmptyRequestMethods,
        options: XMLNode.Options = [],
        acceptableContentTypes: Set<String>? = nil,
        acceptableStatusCodes: IndexSet? = nil
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.options = options
        self.acceptableContentTypes = acceptableContentTypes
        self.acceptableStatusCodes = acceptableStatusCodes
    }

    /// Parses the body as an XML document, refusing XML that is not well-formed.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws
        -> XMLDocument
    {
        guard let data = try preparedData(request: request, response: response, data: data, error: error) else {
            return XMLDocument()
        }
        // XMLDocument on Linux recovers from malformed input without throwing, so a strict SAX pass decides first.
        try XMLWellFormedness.check(data)
        do {
            return try XMLDocument(data: data, options: options)
        } catch {
            throw AFError.responseSerializationFailed(reason: .xmlSerializationFailed(error: error))
        }
    }
}

/// A `ResponseSerializer` that returns an `XMLParser` over the body, for callers who parse by events (AFNetworking's
/// XML parser serializer). The parser is configured but not run; external entities are never resolved.
public final class XMLParserResponseSerializer: ResponseSerializer {
    /// The value made: named, so one type answers for both data and download serialization.
    public typealias SerializedObject = XMLParser

    /// The preprocessor.
    public let dataPreprocessor: any DataPreprocessor
    /// HTTP response codes for which empty responses are allowed.
    public let emptyResponseCodes: Set<Int>
    /// `HTTPMethod`s for which empty responses are always valid.
    public let emptyRequestMethods: Set<HTTPMethod>
    /// Sets `XMLParser.shouldProcessNamespaces`.
    public let shouldProcessNamespaces: Bool
    /// Sets `XMLParser.shouldReportNamespacePrefixes`.
    public let shouldReportNamespacePrefixes: Bool
    /// MIME types the body must have; `nil` checks nothing.
    public let acceptableContentTypes: Set<String>?
    /// Status codes the response must have; `nil` checks nothing.
    public let acceptableStatusCodes: IndexSet?

    /// Creates an instance with the provided values.
    ///
    /// - Parameters:
    ///   - dataPreprocessor:              `DataPreprocessor` used to prepare the received `Data`.
    ///   - emptyResponseCodes:            The HTTP response codes for which empty responses are allowed.
    ///   - emptyRequestMethods:           The HTTP request methods for which empty responses are allowed.
    ///   - shouldProcessNamespaces:       Whether the parser reports namespaces. `false` by default.
    ///   - shouldReportNamespacePrefixes: Whether the parser reports namespace prefixes. `false` by default.
    ///   - acceptableContentTypes:        MIME types the body must have; `nil` (the default) checks nothing.
    ///   - acceptableStatusCodes:         Status codes the response must have; `nil` (the default) checks nothing.
    public init(
        dataPreprocessor: any DataPreprocessor = XMLParserResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = XMLParserResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = XMLParserResponseSerializer.defaultEmptyRequestMethods,
        shouldProcessNamespaces: Bool = false,
        shouldReportNamespacePrefixes: Bool = false,
        acceptableContentTypes: Set<String>? = nil,
        acceptableStatusCodes: IndexSet? = nil
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.shouldProcessNamespaces = shouldProcessNamespaces
        self.shouldReportNamespacePrefixes = shouldReportNamespacePrefixes
        self.acceptableContentTypes = acceptableContentTypes
        self.acceptableStatusCodes = acceptableStatusCodes
    }

    /// Returns a configured parser over the body.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws
        -> XMLParser
    {
        let body = try preparedData(request: request, response: response, data: data, error: error) ?? Data()
        let parser = XMLParser(data: body)
        parser.shouldProcessNamespaces = shouldProcessNamespaces
        parser.shouldReportNamespacePrefixes = shouldReportNamespacePrefixes
        parser.shouldResolveExternalEntities = false
        return parser
    }
}

/// A strict, event-only pass over XML that throws on the first error.
enum XMLWellFormedness {
    static func check(_ data: Data) throws {
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        // `parse()` can return true and still have recorded an error (an unclosed tag at the end), so both count.
        let parsed = parser.parse()
        if let error = parser.parserError {
            throw AFError.responseSerializationFailed(reason: .xmlSerializationFailed(error: error))
        }
        guard parsed else {
            throw AFError.responseSerializationFailed(
                reason: .xmlSerializationFailed(error: CocoaError(.propertyListReadCorrupt)))
        }
    }
}
