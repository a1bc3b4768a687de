// The in-process test server is part of the testing product: `import BluebonnetTesting` gives both the stubs and
// `TestServer`.
@_exported import BluebonnetTestServer
