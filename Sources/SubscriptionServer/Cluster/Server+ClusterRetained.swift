import SubscriptionCenter
import SubscriptionCommands
import SubscriptionProtocol
import SubscriptionWire

/// The server's side of retained numbers shared between nodes (docs/CLUSTER.md, "The message path", step 5): a
/// publication to a shared retained number is written to the cluster's retained bucket first and delivered on every
/// node (this one too) from what the bucket stored, with the revision the bucket's writers agreed on. `GET` and the
/// value pushed on `SUB` read the center's slot as on a single node: the bridge keeps it at the bucket's value.
extension Server {
    /// With `cluster:`, a `PUB`/`SEND` to a retained number the cluster shares: the session is held while the bridge
    /// writes the value to the bucket (so a publisher's order is kept), then answers `+OK <n>`, `n` counting this
    /// node's receivers of it and, with `ack: all`, the other nodes' (the bridge waits for them as for a plain
    /// publication), or `-ERR LIMIT` when the bucket cannot be reached (nothing was published). Nil for every other
    /// publication (the caller publishes as on a single node).
    func publishRetainedInCluster<Client: SessionCustomer>(
        _ number: String, payload: ArraySlice<UInt8>, info: [InfoPair], sender: String?,
        _ environment: ClusterNodeEnvironment<Client>
    ) -> Reply? {
        guard let cluster, cluster.sharesRetained(number), isRetainedHere(number) else { return nil }
        // The payload is a slice of the session's read buffer, which the commands behind this one reuse.
        let kept = Array(payload)
        return environment.answerLater { [self] answer in
            cluster.publishRetained(to: number, sender: sender, info: info, payload: kept) { [self] result in
                answer(
                    result.map { receivers in
                        stats.messagesPublished += 1
                        numberCounters.published(to: number)
                        return .count(receivers)
                    })
            }
        }
    }

    /// True when `number` exists on this node as a retained number.
    private func isRetainedHere(_ number: String) -> Bool {
        do {
            return try center.retainedSlot(of: number) != nil
        } catch {
            return false
        }
    }

    /// A value the cluster's retained bucket stored for `number` at `revision` (a publication on any node, this one
    /// included): it becomes the number's current value here and is delivered to this node's subscribers with
    /// `rev=<revision>`, saved with the state directory. Returns the receivers; nil, changing nothing, when this node
    /// has no such retained number or has that revision (or a later one) already.
    @discardableResult
    package func applyClusterRetained(
        _ number: String, revision: UInt64, sender: String?, info: [InfoPair], payload: [UInt8]
    ) -> Int? {
        let current: UInt64
        do {
            guard let slot = try center.retainedSlot(of: number) else { return nil }
            current = slot.revision
        } catch {
            return nil
        }
        guard revision > current else { return nil }
        let receivers: Int
        do {
            receivers = try center.send(to: number, from: sender, atRevision: revision) { (revision: UInt64?) in
                payload.withUnsafeBytes {
                    Publication.make(number: number, sender: sender, revision: revision, info: info, payload: $0)
                }
            }
        } catch {
            return nil
        }
        stats.messagesDelivered += UInt64(receivers)
        saveValue(of: number, revision: revision, sender: sender, info: info, payload: payload[...])
        return receivers
    }
}
