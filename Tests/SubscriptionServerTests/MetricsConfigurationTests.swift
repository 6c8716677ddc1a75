import XCTest

@testable import SubscriptionServer

/// `metrics_listen` and `metrics_top_numbers` as the configuration checks them.
final class MetricsConfigurationTests: XCTestCase {
    func testMetricsAreOffByDefault() {
        let configuration = ServerConfiguration()
        XCTAssertNil(configuration.metricsListen)
        XCTAssertEqual(configuration.metricsTopNumbers, 20)
        XCTAssertFalse(configuration.countsNumbers, "no per-number counting while metrics are off")
    }

    func testAnAddressErrorNamesTheMetricsKey() {
        XCTAssertThrowsError(try ListenAddress(parsing: "127.0.0.1", key: "metrics_listen")) { error in
            XCTAssertEqual("\(error)", "metrics_listen: '127.0.0.1' has no port (expected HOST:PORT)")
        }
    }

    func testOnlyTCPIsServed() {
        var configuration = ServerConfiguration()
        configuration.metricsListen = .unix(path: "/tmp/m.sock")
        XCTAssertThrowsError(try configuration.validate()) { error in
            XCTAssertEqual((error as? ConfigurationError)?.key, "metrics_listen")
        }
    }

    func testTopNumbersRange() throws {
        var configuration = ServerConfiguration()
        configuration.metricsListen = .tcp(host: "127.0.0.1", port: 0)
        for good in [0, 1, 20, NumberCounters.maxShown] {
            configuration.metricsTopNumbers = good
            XCTAssertNoThrow(try configuration.validate(), "\(good)")
        }
        XCTAssertFalse(
            {
                configuration.metricsTopNumbers = 0
                return configuration.countsNumbers
            }())
        for bad in [-1, NumberCounters.maxShown + 1] {
            configuration.metricsTopNumbers = bad
            XCTAssertThrowsError(try configuration.validate(), "\(bad)") { error in
                XCTAssertEqual((error as? ConfigurationError)?.key, "metrics_top_numbers")
            }
        }
    }
}
