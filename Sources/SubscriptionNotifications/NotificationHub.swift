/// NSNotificationCenter for Swift concurrency, in process: numbers to post to, observers of numbers and wildcard
/// patterns (as a stream, a closure with a token, or a closure on an object held weakly), and retained numbers whose
/// changes can be watched with their old and new values (KVO). Safe from any thread or task.
///
/// It is the subscription center of subd (`SubscriptionCenter`) made shareable: one center, owned behind a lock.
/// The words are the daemon's, so a notification posted here has the shape a subd `MSG` has:
///
/// | NotificationCenter | NotificationHub |
/// | --- | --- |
/// | notification name | number (`CART.changes`), created first (``create(_:retained:)``) |
/// | `post(name:object:userInfo:)` | ``post(_:from:info:payload:)``, returning how many observers got it |
/// | `notifications(named:object:)` | ``observe(_:from:group:bufferLimit:)`` (an `AsyncStream`) |
/// | `addObserver(forName:object:queue:using:)` | ``addObserver(for:from:group:queue:using:whenRemoved:)`` (a token) |
/// | `addObserver(_:selector:name:object:)` | ``addObserver(_:for:from:group:queue:using:whenRemoved:)`` (weak) |
/// | `name: nil` (every notification) | the pattern `>` |
/// | KVO `[.initial, .old, .new]` | ``watch(_:bufferLimit:)`` of a retained number |
///
/// **Why "hub":** `SubscriptionCenter` is the single-owner engine this type wraps, and Foundation's
/// `NotificationCenter` may well be imported beside it; a hub is where many threads meet one center. Its nested
/// types (``Notification``, ``RetainedValue``, ``Change``, ``Watch``) are nested so that they never clash with
/// Foundation's or the network client's.
///
/// **Threads and order.** Every call takes the hub's lock for the time the center needs, and no observer's code
/// ever runs under it: what a post reaches is put in each observer's mailbox under the lock, and taken from there
/// after (by a stream's reader, or by the one thread that runs a handler), so an observer may post, observe or
/// cancel from inside its handler. Each observer gets its notifications one at a time, **in the order they were
/// posted** (posts from several threads are ordered by the lock), whatever form it has, even a handler on a
/// concurrent queue.
///
/// **No dangling observer.** An observer ends when its token is cancelled or deallocated, its stream's task is
/// cancelled or the stream dropped, or (the weak form) its object is deallocated; it is then never called again
/// and no count includes it. There is no `removeObserver`.
///
/// ```swift
/// let hub = NotificationHub()
/// try hub.create("CART.changes")
/// let token = try hub.addObserver(for: "CART.changes") { note in
///     print(note.from ?? "?", note.text ?? "")
/// }
/// try hub.post("CART.changes", from: "apple", text: "plus")   // prints "apple plus"; returns 1
/// token.cancel()
/// ```
public final class NotificationHub: Sendable {
    /// How many notifications (or, for a watch, values) an observer's stream holds that it has not read yet, unless
    /// it asks for another limit.
    public static let defaultBufferLimit = 1024

    /// The center and its subscribers, behind the lock.
    private let state: HubLock<HubState>

    /// Makes an empty hub: no numbers, no observers.
    ///
    /// ```swift
    /// let hub = NotificationHub()
    /// ```
    public init() {
        state = HubLock(HubState())
    }

    deinit {
        // End every stream and watch, or their readers would wait for ever.
        locked { state in state.endAll() }
    }

    /// Runs `body` on the state under the lock, then, with the lock dropped, what it left to do: waiting readers
    /// resumed, handlers run, and the release of what might run an observer's code.
    func locked<Result: Sendable, Failure: Error>(
        _ body: (inout sending HubState) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let (result, work) = state.withLock { state in
            let result: Swift.Result<Result, Failure>
            do throws(Failure) {
                result = .success(try body(&state))
            } catch {
                result = .failure(error)
            }
            return (result, state.takeWork())
        }
        work.run()
        return try result.get()
    }

    /// Takes the registration out of the center (its token was cancelled, its stream ended).
    func forget(_ registration: Registration) {
        locked { state in state.forget(registration) }
    }
}
