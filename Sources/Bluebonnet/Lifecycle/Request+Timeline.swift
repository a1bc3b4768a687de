import Foundation

#if !canImport(Darwin)
/// Seconds since 1 January 2001 00:00:00 UTC, as CoreFoundation on Apple platforms spells it.
public typealias CFAbsoluteTime = Double
#endif

extension Request {
    /// The times of a request's life: when it started, when the response head arrived, when the body ended and when
    /// serialization finished. Each stamp comes from a real transport or serializer event.
    public struct Timeline: Sendable, Equatable {
        /// The time the request was handed to the transport (the first attempt).
        public let requestStartTime: CFAbsoluteTime
        /// The time the head of the final response was received.
        public let initialResponseTime: CFAbsoluteTime
        /// The time the request completed: the body ended, or it failed.
        public let requestCompletedTime: CFAbsoluteTime
        /// The time serialization of the response completed.
        public let serializationCompletedTime: CFAbsoluteTime

        /// The time from the request start to the first response byte.
        public let latency: TimeInterval
        /// The time from the request start to its completion.
        public let requestDuration: TimeInterval
        /// The time from completion of the request to completion of serialization.
        public let serializationDuration: TimeInterval
        /// The time from the request start to the end of serialization.
        public let totalDuration: TimeInterval

        /// Creates a timeline; the durations are derived from the four stamps.
        ///
        /// - Parameters:
        ///   - requestStartTime:           When the request started. `0.0` by default.
        ///   - initialResponseTime:        When the response head arrived. `0.0` by default.
        ///   - requestCompletedTime:       When the request completed. `0.0` by default.
        ///   - serializationCompletedTime: When serialization completed. `0.0` by default.
        public init(
            requestStartTime: CFAbsoluteTime = 0.0,
            initialResponseTime: CFAbsoluteTime = 0.0,
            requestCompletedTime: CFAbsoluteTime = 0.0,
            serializationCompletedTime: CFAbsoluteTime = 0.0
        ) {
            self.requestStartTime = requestStartTime
            self.initialResponseTime = initialResponseTime
            self.requestCompletedTime = requestCompletedTime
            self.serializationCompletedTime = serializationCompletedTime
            latency = initialResponseTime - requestStartTime
            requestDuration = requestCompletedTime - requestStartTime
            serializationDuration = serializationCompletedTime - requestCompletedTime
            totalDuration = serializationCompletedTime - requestStartTime
        }

        /// The current absolute time on the same scale as the stamps.
        static func now() -> CFAbsoluteTime {
            Date().timeIntervalSinceReferenceDate
        }
    }
}

extension Request.Timeline: CustomStringConvertible {
    /// The durations in seconds, to five decimal places.
    public var description: String {
        "Timeline: { \"Latency\": \(Self.seconds(latency)), \"Request Duration\": \(Self.seconds(requestDuration)), "
            + "\"Serialization Duration\": \(Self.seconds(serializationDuration)), "
            + "\"Total Duration\": \(Self.seconds(totalDuration)) }"
    }

    static func seconds(_ interval: TimeInterval) -> String {
        String(format: "%.5f secs", interval)
    }
}

extension Request.Timeline: CustomDebugStringConvertible {
    /// The four stamps and the durations.
    public var debugDescription: String {
        let stamps = [
            "\"Request Start Time\": \(String(format: "%.3f", requestStartTime))",
            "\"Initial Response Time\": \(String(format: "%.3f", initialResponseTime))",
            "\"Request Completed Time\": \(String(format: "%.3f", requestCompletedTime))",
            "\"Serialization Completed Time\": \(String(format: "%.3f", serializationCompletedTime))",
            "\"Latency\": \(Self.seconds(latency))",
            "\"Request Duration\": \(Self.seconds(requestDuration))",
            "\"Serialization Duration\": \(Self.seconds(serializationDuration))",
            "\"Total Duration\": \(Self.seconds(totalDuration))",
        ]
        return "Timeline: { " + stamps.joined(separator: ", ") + " }"
    }
}
