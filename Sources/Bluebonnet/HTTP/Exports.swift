// On Linux, `URLRequest`, `HTTPURLResponse` and `URLSessionConfiguration` live in FoundationNetworking. Alamofire
// re-exports it, so code written for Alamofire uses them with only `import Alamofire`; `import Bluebonnet` does the same.
#if canImport(FoundationNetworking)
@_exported import FoundationNetworking
#endif
