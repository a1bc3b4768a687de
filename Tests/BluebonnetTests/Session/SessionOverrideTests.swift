import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire declares every request-making method of `Session` `open` in the class, with the same signatures; clients
/// (Moya's tests among them) subclass `Session` and override them, and pass `shouldAutomaticallyResume:` to each.
final class SessionOverrideTests: ServerTestCase {
    /// Overrides one form of each kind, as Moya's test session does for multipart uploads.
    final class RecordingSession: Session, @unchecked Sendable {
        // @unchecked: adds only `calls`, a Recorder, which has a lock of its own.
        let calls = Recorder<String>()

        override func upload(
            multipartFormData: MultipartFormData, with request: any URLRequestConvertible,
            usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
            interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil,
            fileManager: FileManager = .default
        ) -> UploadRequest {
            calls.append("upload")
            return super.upload(
                multipartFormData: multipartFormData, with: request, usingThreshold: encodingMemoryThreshold,
                interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume,
                fileManager: fileManager)
        }

        override func download(
            _ convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
            shouldAutomaticallyResume: Bool? = nil, to destination: DownloadRequest.Destination? = nil
        ) -> DownloadRequest {
            calls.append("download")
            return super.download(
                convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume,
                to: destination)
        }

        override func streamRequest(
            _ convertible: any URLRequestConvertible, automaticallyCancelOnStreamError: Bool = false,
            interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil
        ) -> DataStreamRequest {
            calls.append("stream")
            return super.streamRequest(
                convertible, automaticallyCancelOnStreamError: automaticallyCancelOnStreamError,
                interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)
        }
    }

    func testTheConvenienceFormsReachTheOverriddenMethods() async throws {
        let session = RecordingSession()
        let form = MultipartFormData()
        form.append(Data("v".utf8), withName: "k")
        let uploaded = await session.upload(multipartFormData: form, to: url("/post")).serializingData().response
        XCTAssertEqual(uploaded.response?.statusCode, 200)
        let downloaded = await session.download(url("/get")).serializingDownloadedFileURL().response
        XCTAssertEqual(downloaded.response?.statusCode, 200)
        if let file = downloaded.fileURL { try? FileManager.default.removeItem(at: file) }
        let stream = session.streamRequest(url("/get"))
        for await _ in stream.streamTask().streamingData() {}
        XCTAssertEqual(stream.response?.statusCode, 200)
        // The builder-closure form reaches the same override, as Alamofire's does.
        _ = await session.upload(multipartFormData: { $0.append(Data("v".utf8), withName: "k") }, to: url("/post"))
            .serializingData().response
        XCTAssertEqual(session.calls.values, ["upload", "download", "stream", "upload"])
    }

    func testARequestsDelegateIsItsSessionWithItsConfiguration() {
        // As Moya's logger reads it: `request.delegate?.sessionConfiguration.httpAdditionalHeaders`.
        let configuration = URLSessionConfiguration.af.default
        configuration.httpAdditionalHeaders = ["X-Session": "yes"]
        let session = Session(configuration: configuration, startRequestsImmediately: false)
        let request = session.request(url("/get"))
        XCTAssertTrue(request.delegate === session)
        let headers = request.delegate?.sessionConfiguration.httpAdditionalHeaders as? [String: String]
        XCTAssertEqual(headers?["X-Session"], "yes")
        XCTAssertEqual(request.delegate?.startImmediately, false)
        request.delegate?.sessionConfiguration.httpAdditionalHeaders = [:]
        XCTAssertEqual(
            (session.sessionConfiguration.httpAdditionalHeaders as? [String: String])?["X-Session"], "yes",
            "a copy: changing it changes nothing")
    }

    func testAShouldAutomaticallyResumeOfFalseHoldsADownloadAndAStreamUntilResume() async throws {
        let download = session.download(url("/get"), shouldAutomaticallyResume: false)
        let stream = session.streamRequest(url("/get"), shouldAutomaticallyResume: false)
        let downloaded = expectation(description: "download")
        let streamed = expectation(description: "stream")
        download.response(queue: .global()) { _ in downloaded.fulfill() }
        stream.responseStream(on: .global()) { event in
            if case .complete = event.event { streamed.fulfill() }
        }
        session.drain()
        XCTAssertTrue(download.isInitialized, "a response handler did not start it")
        XCTAssertTrue(stream.isInitialized, "a stream handler did not start it")
        download.resume()
        stream.resume()
        await fulfillment(of: [downloaded, streamed], timeout: 30)
        if let file = download.fileURL { try? FileManager.default.removeItem(at: file) }
    }
}
