import QuireFixtures
import QuireHTTP

/// Runs `request` and returns its error, or nil when it succeeded.
func failure(_ request: () async throws(HTTPError) -> HTTPResponse) async -> HTTPError? {
    do {
        _ = try await request()
        return nil
    } catch {
        return error
    }
}

/// Deterministic bytes covering every value, so a body round trip is binary-safe.
func pseudoRandomBytes(count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 33)
    }
}

/// A configuration with short timeouts so fault tests end quickly.
func quickConfiguration() -> HTTPClientConfiguration {
    var configuration = HTTPClientConfiguration()
    configuration.connectTimeout = .seconds(5)
    configuration.totalTimeout = .seconds(20)
    configuration.lowSpeedTime = .seconds(10)
    return configuration
}
