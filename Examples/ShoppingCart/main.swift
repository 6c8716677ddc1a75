// The seed's shopping cart on NotificationHub: each cell posts "plus" or "minus" to CART.changes with itself as the
// sender; the controller (held weakly: no removeObserver) keeps the total and posts it to the retained number
// CART.count; a KVO-style watch of CART.count prints each change, old -> new. `swift run shopping-cart`.
import SubscriptionNotifications
import Synchronization

/// One row of the cart: its + and - buttons post to CART.changes, with the cell as the sender.
struct Cell {
    let item: String
    let hub: NotificationHub

    @discardableResult func plus() throws -> Int { try hub.post("CART.changes", from: item, text: "plus") }
    @discardableResult func minus() throws -> Int { try hub.post("CART.changes", from: item, text: "minus") }
}

/// Observes every cell and keeps the total; the hub holds it weakly, so it leaves when it is deallocated.
final class Controller: Sendable {
    let total = Mutex(0)

    init(hub: NotificationHub) throws {
        try hub.addObserver(self, for: "CART.changes") { [weak hub] controller, note in
            let total = controller.total.withLock { total in
                total += note.text == "plus" ? 1 : -1
                return total
            }
            print("\(note.from ?? "?") \(note.text ?? ""): total \(total)")
            _ = try? hub?.post("CART.count", from: "controller", text: String(total))
        }
    }
}

let hub = NotificationHub()
try hub.create("CART.changes")
try hub.create("CART.count", retained: true)
let counts = try hub.watch("CART.count")
let apple = Cell(item: "apple", hub: hub)
let pear = Cell(item: "pear", hub: hub)
do {
    let controller = try Controller(hub: hub)
    try apple.plus()
    try apple.plus()
    try pear.plus()
    try apple.minus()
    print("total: \(controller.total.withLock { $0 }), observers: \(hub.observerCount(of: "CART.changes"))")
}
for await change in counts {
    print("count: \(change.old?.text ?? "(none)") -> \(change.new.text ?? "") (revision \(change.revision))")
    if change.revision == 4 { break }
}
print("controller gone: a plus now reaches \(try pear.plus()) observers")
