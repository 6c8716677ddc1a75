import Dispatch
import SubscriptionCommands
import SubscriptionProtocol
import SubscriptionWire

/// HELLO's check of a user's secret (``CommandEnvironment/verify(_:as:)``), off the event loop: a PBKDF2 takes
/// milliseconds.
enum SecretVerification {
    /// Checks `secret` as the secret of the user `name` on ``verifyQueue``, holding the session meanwhile; then, on
    /// the loop, logs the client in and answers the welcome, or answers the failure. A name that is no user's is
    /// checked against a stand-in hash, so the answer takes as long either way (the timing does not tell which names
    /// are users). One check at a time: however many connections send HELLOs, they cost at most one core.
    static func verify<Environment: ServerEnvironment>(_ secret: String, as name: String, _ environment: Environment) {
        let session = environment.session
        let server = environment.server
        let user = server.users[ExactName(name)]
        let hash = user?.secret ?? standInHash
        session.hold()
        verifyQueue.async {
            let matches = hash?.verify(secret) == true && user != nil
            server.queue.async {
                guard session.machine.phase != .closed else { return }
                // A reload may have changed the user while the check ran: the secret that was checked must still be
                // the user's, and the rights granted are the current ones.
                if matches, let user, let current = server.users[ExactName(name)], current.secret == user.secret {
                    session.client.logIn(as: UserRights(current))
                    session.queue(HelloCommand.welcome(environment))
                    session.release()
                } else {
                    let error = ProtocolError(.auth, "wrong name or secret")
                    session.queueError(
                        HelloCommand.failed(error, client: &session.client, environment: environment, held: true))
                }
                server.loop.endOfTurn()
            }
        }
    }

    /// Checks `secret` as the secret of the user `name` on ``verifyQueue`` (an unknown name against the stand-in
    /// hash, as ``verify(_:as:_:)`` does), then calls `completion` on the server's queue with the user, nil when
    /// the secret is not theirs (or the user changed meanwhile). For MQTT's CONNECT.
    static func check(
        _ secret: String, as name: String, in server: Server,
        completion: @escaping @Sendable (UserAccount?) -> Void
    ) {
        let user = server.users[ExactName(name)]
        let hash = user?.secret ?? standInHash
        verifyQueue.async {
            let matches = hash?.verify(secret) == true && user != nil
            server.queue.async {
                if matches, let user, let current = server.users[ExactName(name)], current.secret == user.secret {
                    completion(current)
                } else {
                    completion(nil)
                }
                server.loop.endOfTurn()
            }
        }
    }

    /// Where users' secrets are checked, one at a time.
    private static let verifyQueue = DispatchQueue(label: "subd.verify-secret")

    /// The hash an unknown name's secret is checked against (made once, with a random salt and the default cost).
    private static let standInHash: SecretHash? = try? SecretHash.make(secret: "stand-in")
}
