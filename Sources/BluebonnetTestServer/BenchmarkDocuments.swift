import Foundation

/// Deterministic JSON documents shared by the test server and the benchmark driver, so both serve the same bytes.
public enum BenchmarkDocuments {
    /// A JSON array of `count` records: `{"id":…,"name":"flower-…","score":…,"tags":["bluebonnet","texas"]}`.
    ///
    /// - Parameter count: How many records.
    /// - Returns: The UTF-8 JSON.
    public static func records(_ count: Int) -> Data {
        var text = "["
        text.reserveCapacity(count * 90)
        for index in 0..<count {
            if index > 0 { text += "," }
            text +=
                "{\"id\":\(index),\"name\":\"flower-\(index)\",\"score\":\(Double(index % 1000) / 8),\"tags\":[\"bluebonnet\",\"texas\"]}"
        }
        text += "]"
        return Data(text.utf8)
    }
}
