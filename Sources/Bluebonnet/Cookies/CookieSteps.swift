import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends the jar's cookies for each hop's URL; a `Cookie` header the request or the session sets itself wins.
struct CookieHeaderPreparer: HopPreparing {
    let jar: CookieJar

    func prepare(_ hop: inout TransportRequest, of request: Request, features: FeatureValues) {
        guard hop.urlRequest.httpShouldHandleCookies, jar.sendsCookies, let url = hop.urlRequest.url,
            !hop.headers.contains(where: { $0.name.equalsIgnoringCase("Cookie") }),
            let cookie = jar.cookieHeader(for: url)
        else { return }
        hop.headers.append(("Cookie", cookie))
    }
}

/// Stores a response's `Set-Cookie` fields before any of its body is read, off the event loop (a storage may write
/// a file): the next hop's `Cookie` header and any request made after completion see them.
struct CookieStoringStep: ResponseHeadStep {
    let jar: CookieJar

    func work(for head: ResponseHeadFacts) -> HeadWork? {
        guard !head.setCookieFields.isEmpty, jar.storesCookies, head.hopRequest?.httpShouldHandleCookies ?? true
        else { return nil }
        let url = head.head.url
        let fields = head.setCookieFields
        let mainDocumentURL = head.hopRequest?.mainDocumentURL ?? head.firstURL
        return { [jar] _, done in
            jar.store(fields, from: url, mainDocumentURL: mainDocumentURL)
            done(nil)
        }
    }
}
