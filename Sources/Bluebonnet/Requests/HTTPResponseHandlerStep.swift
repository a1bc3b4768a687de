import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Shows the final response's head to `onHTTPResponse`'s handler and reads the body once it allows it. The request
/// consults it for final responses only: a response it follows itself (a redirect, a challenge) is not shown, as
/// URLSession shows Alamofire's only the response it does not follow.
struct HTTPResponseHandlerStep: ResponseHeadStep {
    let handler: HTTPResponseHandler

    func work(for head: ResponseHeadFacts) -> HeadWork? {
        let response = head.response
        return { [handler] request, done in
            handler.queue.async {
                handler.handler(response) { disposition in
                    switch disposition {
                    case .allow:
                        done(nil)
                    case .cancel:
                        // Cancelled first, so the request ends as an explicit cancellation, not a failed read.
                        request.cancel()
                        done(.explicitlyCancelled)
                    }
                }
            }
        }
    }
}
