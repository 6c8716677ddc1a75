import XCTest

@testable import SubscriptionServer

/// The Prometheus text format as ``MetricsExposition`` writes it.
final class MetricsExpositionTests: XCTestCase {
    private func text(_ build: (inout MetricsExposition) -> Void) -> String {
        var exposition = MetricsExposition()
        build(&exposition)
        return String(decoding: exposition.bytes, as: UTF8.self)
    }

    func testFamiliesAndSamples() {
        let written = text { text in
            text.single("a_total", .counter, help: "As counted.", 7)
            text.family("b", .gauge, help: "Bs by kind.")
            text.sample(labels: ["kind": "x", "side": "left"], 1)
            text.sample(labels: ["kind": "y", "side": "right"], -2)
            text.family("c_seconds", .gauge, help: "Cs.")
            text.sample(0.25)
        }
        XCTAssertEqual(
            written,
            """
            # HELP a_total As counted.
            # TYPE a_total counter
            a_total 7
            # HELP b Bs by kind.
            # TYPE b gauge
            b{kind="x",side="left"} 1
            b{kind="y",side="right"} -2
            # HELP c_seconds Cs.
            # TYPE c_seconds gauge
            c_seconds 0.25

            """)
    }

    /// A cluster node's label comes first on every sample, labelled or not, escaped as any label value.
    func testACommonLabelOnEverySample() {
        var exposition = MetricsExposition(commonLabel: ("node", "n\"1"))
        exposition.single("a_total", .counter, help: "h", 7)
        exposition.family("b", .gauge, help: "h")
        exposition.sample(labels: ["kind": "x"], 1)
        XCTAssertEqual(
            String(decoding: exposition.bytes, as: UTF8.self),
            """
            # HELP a_total h
            # TYPE a_total counter
            a_total{node="n\\"1"} 7
            # HELP b h
            # TYPE b gauge
            b{node="n\\"1",kind="x"} 1

            """)
    }

    /// A family with no samples (no number published yet) is only its two comment lines, which parsers accept.
    func testAFamilyWithoutSamples() {
        XCTAssertEqual(text { $0.family("n_total", .counter, help: "h") }, "# HELP n_total h\n# TYPE n_total counter\n")
    }

    /// Label values escape backslash, double quote and line feed; help text escapes backslash and line feed. Numbers
    /// may hold `"` and `\`.
    func testEscaping() {
        let written = text { text in
            text.family("m", .gauge, help: "a \\ and a\nline \"quoted\"")
            text.sample(labels: ["number": "A\"b\\c\nd.é"], 1)
        }
        XCTAssertEqual(
            written, "# HELP m a \\\\ and a\\nline \"quoted\"\n# TYPE m gauge\nm{number=\"A\\\"b\\\\c\\nd.é\"} 1\n")
    }

    func testSpecialFloatingPointValues() {
        let written = text { text in
            text.family("f", .gauge, help: "h")
            text.sample(Double.nan)
            text.sample(Double.infinity)
            text.sample(-Double.infinity)
            text.sample(1e-7)
        }
        XCTAssertEqual(
            written.split(separator: "\n").dropFirst(2).map(String.init), ["f NaN", "f +Inf", "f -Inf", "f 1e-07"])
    }

    func testUnsignedValuesAreWrittenWhole() {
        let written = text { $0.single("u_total", .counter, help: "h", .max) }
        XCTAssertTrue(written.hasSuffix("u_total 18446744073709551615\n"), written)
    }

    func testNameRules() {
        XCTAssertTrue(MetricsExposition.isValidMetricName("subd_messages_published_total"))
        XCTAssertTrue(MetricsExposition.isValidMetricName("job:rate:5m"))
        XCTAssertFalse(MetricsExposition.isValidMetricName("9lives"))
        XCTAssertFalse(MetricsExposition.isValidMetricName("a-b"))
        XCTAssertFalse(MetricsExposition.isValidMetricName(""))
        XCTAssertTrue(MetricsExposition.isValidLabelName("reason"))
        XCTAssertFalse(MetricsExposition.isValidLabelName("a:b"))
    }
}
