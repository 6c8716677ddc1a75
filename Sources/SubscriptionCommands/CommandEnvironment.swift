import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

/// Everything a command handler reaches that is neither the center nor the client's state: the session's output and
/// its hold, the settings, the saved state, the `$SYS.` events, the counters, and the other nodes. The server gives a
/// single node's and a cluster node's (two conformances: no handler asks which it runs on); a test gives one that
/// records. Handlers are generic over it, so that the server's calls are specialized and inlined.
///
/// The requirements about other nodes have a single node's implementations (CommandEnvironment+SingleNode.swift):
/// a cluster node's environment replaces them.
public protocol CommandEnvironment: SendableMetatype {
    /// The session as the center's customer (what a `SUB` subscribes).
    associatedtype Client: Customer<Publication>

    // MARK: The session

    /// The session, subscribed and unsubscribed in the center.
    var customer: Client { get }
    /// The session's id (HELLO's reply shows it).
    var sessionID: UInt64 { get }
    /// The bytes the session's output holds now.
    var queuedBytes: Int { get }
    /// `max_pending`: the most the session's output may hold.
    var maxPending: Int { get }
    /// Queues a retained number's current value for the session (on `SUB` and `GET`), before the reply.
    func push(_ value: Publication)
    /// Holds the session: nothing is read, run or written for it until ``release(after:)``.
    func hold()
    /// Ends ``hold()`` after `seconds` (0: now).
    func release(after seconds: Double)
    /// Closes the session gracefully once its reply is out.
    func close(_ reason: CloseRequest)
    /// Answers later: holds the session, calls `start` with the function that queues the reply (or the error), then
    /// releases it. Returns ``Reply/later`` for the handler to return.
    func answerLater(_ start: (_ answer: @escaping @Sendable (Result<Reply, ProtocolError>) -> Void) -> Void) -> Reply

    // MARK: Settings and users

    /// The daemon's version (HELLO's reply).
    var serverVersion: String { get }
    /// `auth_token`, nil when none is set.
    var authToken: String? { get }
    /// True when `users` lists any user.
    var hasUsers: Bool { get }
    /// True when a session must authenticate before anything but `HELLO`, `PING` and `QUIT`.
    var requiresAuthentication: Bool { get }
    /// `auth_failure_delay`, in seconds: a failed HELLO waits this long times the failures so far.
    var authFailureDelay: Double { get }
    /// True when `name` is a configured user's (byte-exact).
    func isUser(_ name: String) -> Bool
    /// Checks `secret` as the user `name`'s, off the loop, with the session held; then logs the client in
    /// (``ClientState/logIn(as:)``) and answers HELLO's welcome, or answers the failure
    /// (``HelloCommand/failed(_:client:environment:held:)``). Returns ``Reply/later``.
    func verify(_ secret: String, as name: String) -> Reply
    /// The `STATS` lines.
    func statsLines() -> [String]

    // MARK: Saved state

    /// With a state directory, stages a publication to a retained number this node saves (it is answered after the
    /// end-of-turn save) and returns ``Reply/staged``; nil, having done nothing, for any other publication.
    func stage(
        _ number: String, payload: ArraySlice<UInt8>, info: [InfoPair], sender: String?
    ) throws(ProtocolError) -> Reply?
    /// With a state directory, saves that `number` was created, before the reply.
    func saveCreated(_ number: String, retained: Bool) throws(ProtocolError)
    /// With a state directory, saves that `number` is removed, before it goes.
    func saveRemoved(_ number: String) throws(ProtocolError)

    // MARK: $SYS and counters

    /// Tells `event`, made by `client`, on its `$SYS.` number.
    func post(_ event: SystemEvent, by client: ClientState)
    /// Counts a publication to `number` that reached `receivers` sessions here.
    func countPublished(to number: String, receivers: Int)
    /// Counts and logs a failed HELLO (`failures`: this connection's so far).
    func countAuthFailure(_ error: ProtocolError, failures: Int)
    /// Counts a command answered `-ERR DENIED`.
    func countDenied()

    // MARK: Other nodes

    /// Creates `number` where the nodes share their numbers, answering later; nil when this node decides alone.
    func createShared(_ number: String, retained: Bool) -> Reply?
    /// Removes `number` where the nodes share their numbers, answering later; nil when this node decides alone.
    func removeShared(_ number: String) -> Reply?
    /// Publishes to a retained number the nodes share, answering later; nil for any other publication.
    func publishShared(_ number: String, payload: ArraySlice<UInt8>, info: [InfoPair], sender: String?) -> Reply?
    /// For a number this node does not know (`notFound`), asks the other nodes: when one has it, the command runs
    /// again through `retry`, else `notFound` is the answer; returns ``Reply/later``. Nil when there is nobody to ask.
    func lookUp(
        _ number: String, notFound: ProtocolError,
        retry:
            @escaping @Sendable (inout ClientState, SubscriptionCenter<Publication>, Self) throws(ProtocolError)
            -> Reply
    ) -> Reply?
    /// Throws the `LIMIT` to answer a `GET` or `SUB` of `pattern` when it matches a retained number in `center` while
    /// this node's view of the other nodes' retained values is not complete (a cluster node that has not caught up
    /// with the buckets); else nothing.
    func requireCaughtUp(_ pattern: String, in center: SubscriptionCenter<Publication>) throws(ProtocolError)
    /// Fans a publication out through `center` (its frame made once, only when someone receives it, or for a
    /// retained number) and to the other nodes that want it.
    func send(
        _ number: String, sender: String?, info: [InfoPair], payload: ArraySlice<UInt8>,
        in center: SubscriptionCenter<Publication>
    ) throws(CenterError) -> Delivery
    /// The reply to a publication's ``Delivery``: `+OK <receivers>`, now or once other nodes counted theirs.
    func reply(to delivery: Delivery) -> Reply
    /// Subscribes the session to `pattern` in `center`, and tells the other nodes of the interest.
    func subscribe(
        _ pattern: String, from: String?, group: String?, in center: SubscriptionCenter<Publication>
    ) throws(CenterError)
    /// Ends the session's subscription to `pattern` (if any), and tells the other nodes.
    func unsubscribe(_ pattern: String, in center: SubscriptionCenter<Publication>)
}
