import XCTest

@testable import SubscriptionServer

/// A user's stored secret: PBKDF2-HMAC-SHA256 with random salt, written `pbkdf2-sha256$<iterations>$<salt>$<hash>`.
/// The known answers were computed with an independent PBKDF2 loop (Python's `hmac` module, not OpenSSL's
/// `PKCS5_PBKDF2_HMAC`).
final class SecretHashTests: XCTestCase {
    /// PBKDF2-HMAC-SHA256("correct horse", "subd-test-salt-1", 10000, 32 bytes).
    let knownAnswer = "pbkdf2-sha256$10000$c3ViZC10ZXN0LXNhbHQtMQ==$xrxrmxT3P17UQYlaxZ4KKYAhTTs4ggm/AbMtEoW6AXQ="
    /// The same salt and count with "café" (é precomposed, U+00E9).
    let knownAnswerCafe = "pbkdf2-sha256$10000$c3ViZC10ZXN0LXNhbHQtMQ==$xcpyOTnK2TbsS4cFoxU6ZamflmLwRpiYFoavkxZVAIY="
    /// Fast enough for a test; the daemon's default is `SecretHash.defaultIterations`.
    let cheap = SecretHash.iterationRange.lowerBound

    func testMakeEncodeParseVerifyRoundTrip() throws {
        let made = try SecretHash.make(secret: "s3cret!", iterations: cheap)
        let parsed = try SecretHash(parsing: made.encoded)
        XCTAssertEqual(parsed, made)
        XCTAssertEqual(parsed.encoded, made.encoded)
        XCTAssertTrue(parsed.verify("s3cret!"))
        XCTAssertTrue(made.verify("s3cret!"))
    }

    func testEncodingHasTheFourFieldsWithDefaultIterationsSixteenBytesOfSaltAndThirtyTwoOfHash() throws {
        let encoded = try SecretHash.make(secret: "s3cret!").encoded
        let fields = encoded.split(separator: "$", omittingEmptySubsequences: false)
        XCTAssertEqual(fields.count, 4)
        XCTAssertEqual(fields[0], "pbkdf2-sha256")
        XCTAssertEqual(fields[1], "\(SecretHash.defaultIterations)")
        XCTAssertEqual(SecretHash.bytes(base64: fields[2])?.count, 16)
        XCTAssertEqual(SecretHash.bytes(base64: fields[3])?.count, 32)
    }

    func testWrongSecretsDoNotVerify() throws {
        let hash = try SecretHash.make(secret: "s3cret!", iterations: cheap)
        for wrong in ["", "s3cret", "s3cret!!", "S3cret!", " s3cret!", "s3cret!\n"] {
            XCTAssertFalse(hash.verify(wrong), "\(wrong.debugDescription) should not verify")
        }
    }

    func testKnownAnswerFromAnIndependentImplementation() throws {
        let hash = try SecretHash(parsing: knownAnswer)
        XCTAssertEqual(hash.iterations, 10_000)
        XCTAssertTrue(hash.verify("correct horse"))
        XCTAssertFalse(hash.verify("correct horsE"))
        XCTAssertEqual(hash.encoded, knownAnswer, "parsing and encoding keep the text as it was")
    }

    func testSecretsAreComparedAsTheirUTF8Bytes() throws {
        let hash = try SecretHash(parsing: knownAnswerCafe)
        XCTAssertTrue(hash.verify("caf\u{E9}"))
        XCTAssertFalse(hash.verify("cafe\u{301}"), "the decomposed spelling is other bytes (HELLO compares bytes)")
    }

    func testTwoHashesOfOneSecretDifferByTheirSalt() throws {
        let first = try SecretHash.make(secret: "same", iterations: cheap)
        let second = try SecretHash.make(secret: "same", iterations: cheap)
        XCTAssertNotEqual(first, second)
        let salts = [first, second].map { $0.encoded.split(separator: "$")[2] }
        XCTAssertNotEqual(salts[0], salts[1])
        XCTAssertTrue(first.verify("same"))
        XCTAssertTrue(second.verify("same"))
    }

    func testMalformedEncodingsAreRefusedWithTheirProblem() {
        let salt = "c3ViZC10ZXN0LXNhbHQtMQ=="
        let hash = "xrxrmxT3P17UQYlaxZ4KKYAhTTs4ggm/AbMtEoW6AXQ="
        let cases: [(String, SecretHash.Problem, String)] = [
            ("", .fieldCount(1), "has 1 '$'-separated fields, not the 4 of pbkdf2-sha256$<iterations>$"),
            ("hunter2", .fieldCount(1), "make one with `subd hash-secret`"),
            ("pbkdf2-sha256$10000$\(salt)", .fieldCount(3), "has 3 '$'-separated fields"),
            ("pbkdf2-sha256$10000$\(salt)$\(hash)$", .fieldCount(5), "has 5 '$'-separated fields"),
            ("pbkdf2-sha1$10000$\(salt)$\(hash)", .unknownAlgorithm, "does not start with pbkdf2-sha256$"),
            ("PBKDF2-SHA256$10000$\(salt)$\(hash)", .unknownAlgorithm, "does not start with pbkdf2-sha256$"),
            ("pbkdf2-sha256$ten$\(salt)$\(hash)", .iterations("ten"), "iteration count 'ten', not a whole number"),
            ("pbkdf2-sha256$$\(salt)$\(hash)", .iterations(""), "from 10000 to 1000000"),
            ("pbkdf2-sha256$+10000$\(salt)$\(hash)", .iterations("+10000"), "'+10000'"),
            ("pbkdf2-sha256$010000$\(salt)$\(hash)", .iterations("010000"), "'010000'"),
            ("pbkdf2-sha256$9999$\(salt)$\(hash)", .iterations("9999"), "'9999'"),
            ("pbkdf2-sha256$1000001$\(salt)$\(hash)", .iterations("1000001"), "'1000001'"),
            ("pbkdf2-sha256$10000$$\(hash)", .salt, "salt that is not padded base64 of 8 to 64 bytes"),
            ("pbkdf2-sha256$10000$c2FsdA==$\(hash)", .salt, "salt"),  // 4 bytes
            ("pbkdf2-sha256$10000$c3ViZC10ZXN0LXNhbHQtMQ$\(hash)", .salt, "salt"),  // padding left out
            ("pbkdf2-sha256$10000$c3ViZC10ZXN0LXNhbHQtMQ!=$\(hash)", .salt, "salt"),
            ("pbkdf2-sha256$10000$\(salt)$", .hash, "hash that is not padded base64 of 32 bytes"),
            ("pbkdf2-sha256$10000$\(salt)$\(salt)", .hash, "32 bytes"),  // 16 bytes
            ("pbkdf2-sha256$10000$\(salt)$\(hash.dropLast())", .hash, "32 bytes"),
            ("pbkdf2-sha256$10000$\(salt)$\(hash.dropLast(2))R=", .hash, "32 bytes"),  // unused bits set
        ]
        for (text, problem, words) in cases {
            XCTAssertThrowsError(try SecretHash(parsing: text), text) { error in
                XCTAssertEqual(error as? SecretHash.Problem, problem, text)
                XCTAssertTrue("\(error)".contains(words), "\(text): '\(error)' should say '\(words)'")
                XCTAssertFalse("\(error)".contains("\n"), "one line: \(error)")
            }
        }
    }

    func testAProblemDoesNotRepeatWhatMayBeAClearSecret() {
        XCTAssertThrowsError(try SecretHash(parsing: "my-clear-secret$a$b$c")) { error in
            XCTAssertFalse("\(error)".contains("my-clear-secret"), "\(error)")
        }
    }

    func testSecretsHELLOCannotCarryAreRefused() {
        let cases: [(String, String)] = [
            ("", "the secret is empty"), ("two words", "the secret holds a space"),
            ("line\nbreak", "the secret holds the control character 0xa"),
        ]
        for (secret, words) in cases {
            XCTAssertThrowsError(try SecretHash.make(secret: secret, iterations: cheap), secret.debugDescription) {
                error in
                XCTAssertTrue("\(error)".hasPrefix(words), "'\(error)' should start '\(words)'")
                XCTAssertTrue("\(error)".contains("HELLO token= could not carry it"), "\(error)")
            }
        }
    }

    func testIterationCountsOutsideTheRangeAreRefusedWhenMaking() {
        for count in [0, SecretHash.iterationRange.lowerBound - 1, SecretHash.iterationRange.upperBound + 1] {
            XCTAssertThrowsError(try SecretHash.make(secret: "x", iterations: count)) { error in
                XCTAssertEqual(error as? SecretHash.Problem, .iterations("\(count)"))
            }
        }
    }

    /// The default count's budget is ~50 ms a verify (about 30 ms on the 2-core VM it was chosen on); this fails
    /// only when a verify takes five times that, e.g. when the default is raised without measuring.
    ///
    /// Other tests run at the same time (and this one runs under ThreadSanitizer too), so the verify is not timed
    /// against a fixed 0.25 s alone: it is timed against a calibration measured in the same run, interleaved with it
    /// so both see the same load: a verify at the cheapest count (10,000 iterations, about 3 ms on that VM, so the
    /// budget of 0.25 s is about 80 of them). The fastest of several of each is kept. A fixed bound stays only for a
    /// far slower verify (1 s: twenty times the budget, e.g. a PBKDF2 that stopped being OpenSSL's), which the ratio
    /// cannot see, as it would slow the calibration as much.
    func testOneVerifyAtTheDefaultCountStaysWithinFiveTimesItsBudget() throws {
        let hash = try SecretHash.make(secret: "s3cret!")
        let calibration = try SecretHash.make(secret: "s3cret!", iterations: cheap)
        func seconds(_ body: () -> Void) -> Double {
            let start = ContinuousClock.now
            body()
            let elapsed = ContinuousClock.now - start
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }
        var fastest = Double.infinity
        var fastestCheap = Double.infinity
        for _ in 0..<5 {
            fastestCheap = min(fastestCheap, seconds { XCTAssertTrue(calibration.verify("s3cret!")) })
            fastest = min(fastest, seconds { XCTAssertTrue(hash.verify("s3cret!")) })
        }
        let budget = 0.25 / 0.003  // five times the budget, in verifies at the cheapest count on the reference VM
        XCTAssertLessThan(
            fastest / fastestCheap, budget,
            "one verify at \(SecretHash.defaultIterations) iterations took \(fastest) s, "
                + "\(fastest / fastestCheap) times one at \(cheap) (\(fastestCheap) s)")
        XCTAssertLessThan(fastest, 1, "one verify at \(SecretHash.defaultIterations) iterations took \(fastest) s")
    }

    func testDescriptionShowsNeitherSaltNorHash() throws {
        let hash = try SecretHash(parsing: knownAnswer)
        XCTAssertEqual("\(hash)", "pbkdf2-sha256$10000$…")
        XCTAssertFalse("\([hash])".contains("xrxrmx"))
    }

    func testBase64MatchesRFC4648AndRefusesOtherSpellings() {
        let vectors = [
            "": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=",
            "foobar": "Zm9vYmFy",
        ]
        for (plain, encoded) in vectors {
            XCTAssertEqual(SecretHash.base64(Array(plain.utf8)), encoded)
            XCTAssertEqual(SecretHash.bytes(base64: encoded[...]), Array(plain.utf8), encoded)
        }
        let allBytes = (0...255).map(UInt8.init)
        XCTAssertEqual(SecretHash.bytes(base64: SecretHash.base64(allBytes)[...]), allBytes)
        for bad in ["Zg", "Zg=", "Zh==", "Zm9=", "Z===", "=Zg=", "Zg==Zg==", "Zm 9v", "Zm9v\n", "Zm-v", "Zm_v"] {
            XCTAssertNil(SecretHash.bytes(base64: bad[...]), bad.debugDescription)
        }
    }
}
