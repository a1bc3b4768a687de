import Bluebonnet
import Foundation
import XCTest

final class AFErrorTests: XCTestCase {
    struct Underlying: Error {}

    func testEveryCaseHasADescriptionAndItsKindCheck() {
        let url = URL(string: "http://example.com")!
        let cases: [(AFError, (AFError) -> Bool)] = [
            (.createUploadableFailed(error: Underlying()), \.isCreateUploadableError),
            (.createURLRequestFailed(error: Underlying()), \.isCreateURLRequestError),
            (
                .downloadedFileMoveFailed(error: Underlying(), source: url, destination: url),
                \.isDownloadedFileMoveError
            ),
            (.explicitlyCancelled, \.isExplicitlyCancelledError),
            (.invalidURL(url: "bad"), \.isInvalidURLError),
            (.multipartEncodingFailed(reason: .bodyPartURLInvalid(url: url)), \.isMultipartEncodingError),
            (.parameterEncodingFailed(reason: .missingURL), \.isParameterEncodingError),
            (.parameterEncoderFailed(reason: .missingRequiredComponent(.url)), \.isParameterEncoderError),
            (.redirectFailed(reason: .tooManyRedirects(limit: 3)), \.isRedirectError),
            (.requestAdaptationFailed(error: Underlying()), \.isRequestAdaptationError),
            (.requestRetryFailed(retryError: Underlying(), originalError: Underlying()), \.isRequestRetryError),
            (.responseValidationFailed(reason: .unacceptableStatusCode(code: 404)), \.isResponseValidationError),
            (.responseSerializationFailed(reason: .inputDataNilOrZeroLength), \.isResponseSerializationError),
            (.serverTrustEvaluationFailed(reason: .noCertificatesFound), \.isServerTrustEvaluationError),
            (.sessionDeinitialized, \.isSessionDeinitializedError),
            (.sessionInvalidated(error: nil), \.isSessionInvalidatedError),
            (.sessionTaskFailed(error: URLError(.timedOut)), \.isSessionTaskError),
            (.urlRequestValidationFailed(reason: .invalidHeaderName("a b")), \.isURLRequestValidationError),
        ]
        for (error, check) in cases {
            XCTAssertTrue(check(error), "\(error)")
            XCTAssertFalse(error.localizedDescription.isEmpty)
            XCTAssertNotNil(error.errorDescription)
        }
    }

    func testUnderlyingErrorsAreKept() {
        XCTAssertTrue(AFError.sessionTaskFailed(error: Underlying()).underlyingError is Underlying)
        XCTAssertTrue(
            AFError.responseSerializationFailed(reason: .decodingFailed(error: Underlying())).underlyingError
                is Underlying)
        XCTAssertTrue(
            AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error: Underlying())).underlyingError
                is Underlying)
        XCTAssertTrue(
            AFError.responseValidationFailed(reason: .customValidationFailed(error: Underlying())).underlyingError
                is Underlying)
        XCTAssertNil(AFError.explicitlyCancelled.underlyingError)
    }

    func testConvenienceValues() {
        XCTAssertEqual(AFError.responseValidationFailed(reason: .unacceptableStatusCode(code: 418)).responseCode, 418)
        let contentType = AFError.responseValidationFailed(
            reason: .unacceptableContentType(acceptableContentTypes: ["a/b"], responseContentType: "c/d"))
        XCTAssertEqual(contentType.acceptableContentTypes, ["a/b"])
        XCTAssertEqual(contentType.responseContentType, "c/d")
        XCTAssertEqual(AFError.invalidURL(url: "x").urlConvertible as? String, "x")
        XCTAssertNotNil(Underlying().asAFError == nil ? "not an AFError" : nil)
        XCTAssertEqual((AFError.explicitlyCancelled as Error).asAFError?.isExplicitlyCancelledError, true)
    }
}
