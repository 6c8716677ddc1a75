/// Keeps a closure observer of a ``NotificationHub`` in place
/// (``NotificationHub/addObserver(for:from:group:queue:using:whenRemoved:)``): cancel it, or let it go, and the
/// observer ends. No `removeObserver` is needed, and none can be forgotten.
///
/// After ``cancel()`` returns, or once the token is deallocated, the handler is not started again (a call already
/// running on another thread finishes) and no count includes the observer. Cancelling again, from any thread or
/// from inside the handler itself, does nothing more.
///
/// ```swift
/// final class CartView {
///     private var tokens: [ObservationToken] = []
///     func start(_ hub: NotificationHub) throws {
///         tokens.append(try hub.addObserver(for: "CART.changes") { note in print(note.text ?? "") })
///     }
///     // the observers end with the view
/// }
/// ```
public final class ObservationToken: Sendable {
    private let registration: Registration

    init(_ registration: Registration) {
        self.registration = registration
    }

    deinit {
        registration.end()
    }

    /// Ends the observer now.
    ///
    /// ```swift
    /// let token = try hub.addObserver(for: "CART.changes") { _ in }
    /// token.cancel()   // hub.observerCount(of: "CART.changes") is 0 again
    /// ```
    public func cancel() {
        registration.end()
    }

}
