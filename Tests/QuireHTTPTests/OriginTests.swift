import Testing

@testable import QuireHTTP

/// What a redirect must keep to be followed: scheme, host and port.
@Suite struct OriginTests {
    @Test func originsAreSchemeHostAndPort() throws {
        let plain = try #require(Origin("http://User:pw@Example.com/a?b"))
        #expect(plain == Origin("http://example.com:80/other") && plain != Origin("http://example.com:8080/"))
        #expect(try #require(Origin("https://example.com/")).isUpgrade(of: plain))
        #expect(Origin("https://[::1]:8443/x")?.port == 8443 && Origin("http://[::1]/")?.host == "[::1]")
        #expect(Origin("file:///etc/passwd") == nil && Origin("http://h:99999/") == nil && Origin("http:///x") == nil)
    }
}
