import SubscriptionWire

extension SubscriptionCenter {
    /// Sends a message to a number. Every live customer with a matching subscription (exact or wildcard) whose
    /// `from` filter passes gets ``Customer/receive(_:on:)`` called **at most once**, however many of its
    /// subscriptions match. A subscription with a `from` filter only passes messages sent with that very sender.
    ///
    /// The subscribers are those at the moment of the call: one subscribed by a `receive` during the send is not
    /// reached, one unsubscribed during it is skipped if not reached yet. Returns how many `receive` calls returned
    /// true. Throws ``CenterError/notFound(_:)`` when the number does not exist.
    @discardableResult
    @inlinable public func send(_ message: Message, to number: String, from sender: String? = nil) throws(CenterError)
        -> Int
    {
        try send(to: number, from: sender) { message }
    }

    /// ``send(_:to:from:)`` with the message made only when there is someone to receive it: `message` is called at
    /// most once, before the first delivery (the daemon frames a publication only when some session will get it).
    @discardableResult
    @inlinable public func send(
        to number: String, from sender: String? = nil, message: () -> Message
    ) throws(CenterError) -> Int {
        try send(to: number, from: sender) { (_: UInt64?) in message() }
    }

    /// ``send(to:from:message:)`` where the message may carry its revision: for a retained number the next one
    /// (1, 2, ...), passed to `message`, which is then always made and kept as the number's current value, receivers
    /// or not; nil for a plain number. `revision`, when given, is the retained number's new revision instead of the
    /// next one: a revision decided elsewhere (a cluster's shared bucket, where revisions may be skipped by a node
    /// that missed some); the caller keeps it above the current one.
    @discardableResult
    @inlinable public func send(
        to number: String, from sender: String? = nil, atRevision revision: UInt64? = nil,
        revisedMessage makeMessage: (UInt64?) -> Message
    ) throws(CenterError) -> Int {
        try send(to: number, from: sender, audience: .everyone, atRevision: revision, revisedMessage: makeMessage)
            .accepted
    }

    /// ``send(to:from:revisedMessage:)`` to the part of the matching subscribers `audience` names, and the queue
    /// groups that matched put in `groupsMet` (each group with a matching member whose `from` filter passes, also
    /// when every such member had the message through another subscription). The cluster bridge uses it
    /// (docs/CLUSTER.md, "The message path", step 3): a local publication serves ``Audience/everyone`` and names the
    /// groups it met to the other nodes; another node's publication is served in two parts, the copy of a plain
    /// upstream subscription to ``Audience/plainOnly`` and the copy of a group's queue subscription to
    /// ``Audience/group(_:)``, so that together they serve what one local send would.
    @discardableResult
    @inlinable public func send(
        to number: String, from sender: String? = nil, audience: Audience, groupsMet: inout [String],
        revisedMessage makeMessage: (UInt64?) -> Message
    ) throws(CenterError) -> Int {
        let sent = try send(to: number, from: sender, audience: audience, atRevision: nil, revisedMessage: makeMessage)
        groupsMet = sent.groups?.groups.map(\.name) ?? []
        return sent.accepted
    }

    /// The one send: every public form comes here (inlined, so the local form costs what it did before audiences:
    /// the group candidates are made only past the early returns, as before). Returns how many accepted it, and the
    /// groups that matched (nil when no subscriber matched at all).
    @inline(__always)
    @inlinable func send(
        to number: String, from sender: String?, audience: Audience, atRevision revision: UInt64?,
        revisedMessage makeMessage: (UInt64?) -> Message
    ) throws(CenterError) -> (accepted: Int, groups: GroupCandidates<Message>?) {
        guard let entry = entry(forSending: number) else { throw .notFound(number) }
        // A plain number nobody can receive from (the ingest case): no snapshot to take and give back.
        if entry.retained == nil && entry.subscribers.isEmpty && trie.isEmpty { return (0, nil) }
        // Snapshots: a `receive` that changes subscriptions changes copies, not what is iterated here.
        let exact = entry.subscribers.items
        // No wildcard subscription at all (the common case): no snapshot, not even an empty one to release.
        let wildcard: [Subscription<Message>]? = trie.isEmpty ? nil : matchCache.matches(for: number, in: &trie)
        let noWildcard = wildcard?.isEmpty ?? true
        let message: Message
        if var slot = entry.retained {
            slot.revision = revision ?? slot.revision + 1
            message = makeMessage(slot.revision)
            slot.value = message
            slot.sender = sender
            entry.retained = slot
        } else {
            if exact.isEmpty && noWildcard { return (0, nil) }
            message = makeMessage(nil)
        }
        if exact.isEmpty && noWildcard { return (0, nil) }
        var visits = beginVisits()
        deliveryDepth += 1
        defer { deliveryDepth -= 1 }
        var groups = GroupCandidates<Message>()
        let plain = audience.servesPlainSubscribers
        var accepted = deliver(
            message, to: number, from: sender, through: exact, plain: plain, visits: &visits, groups: &groups)
        if let wildcard, !wildcard.isEmpty {
            accepted += deliver(
                message, to: number, from: sender, through: wildcard, plain: plain, visits: &visits, groups: &groups)
        }
        if !groups.isEmpty {
            switch audience {
            case .everyone: accepted += deliver(message, to: number, throughGroups: groups, only: nil, visits: &visits)
            case .plainOnly: break
            case .group(let name):
                accepted += deliver(message, to: number, throughGroups: groups, only: name, visits: &visits)
            }
        }
        return (accepted, groups)
    }

    /// Gives the message to one member of each queue group that matched: the next in turn (round-robin over the
    /// group's matching members, in subscription order) that has not received it already through another
    /// subscription. A group whose every matching member already has it is satisfied. With `only`, that group alone.
    @inlinable func deliver(
        _ message: Message, to number: String, throughGroups groups: GroupCandidates<Message>, only: String?,
        visits: inout Visits<Message>
    ) -> Int {
        var accepted = 0
        for (name, candidates) in groups.groups {
            if let only, !Self.sameBytes(only, name) { continue }
            // No entry: the group's last subscription left during this send (a `receive` unsubscribed it).
            guard let index = queueGroups.index(forKey: NameKey(name)) else { continue }
            let members = candidates.filter { !visits.contains($0) }
            guard !members.isEmpty else { continue }
            let turn = queueGroups.values[index].turn
            queueGroups.values[index].turn = turn &+ 1
            let chosen = members[Int(turn % UInt(members.count))]
            visits.insert(chosen)
            if let customer = chosen.customer {
                if customer.receive(message, on: number, throughGroup: name) { accepted += 1 }
            } else {
                purge(chosen)
            }
        }
        return accepted
    }

    /// How many live customers a message to the number would reach: exact and wildcard subscribers, each customer
    /// once, `from` filters ignored. 0 when the number does not exist (a send to it would fail).
    @inlinable public func subscriberCount(of number: String) -> Int {
        guard let entry = numbers[NameKey(number)] else { return 0 }
        var visits = beginVisits()
        var count = countLive(entry.subscribers.items, visits: &visits)
        if !trie.isEmpty {
            count += countLive(matchCache.matches(for: number, in: &trie), visits: &visits)
        }
        return count
    }

    @inlinable func deliver(
        _ message: Message,
        to number: String,
        from sender: String?,
        through subscriptions: [Subscription<Message>],
        plain: Bool,
        visits: inout Visits<Message>,
        groups: inout GroupCandidates<Message>
    ) -> Int {
        var accepted = 0
        // `subscriptions` is a snapshot that holds every element for the whole loop, so they are read without
        // retaining them (a retain and release per subscription and record showed up at several percent).
        subscriptions.withUnsafeBufferPointer { buffer in
            for index in buffer.indices {
                Unmanaged.passUnretained(buffer[index])._withUnsafeGuaranteedRef { subscription in
                    guard subscription.isActive else { return }
                    Unmanaged.passUnretained(subscription.record)._withUnsafeGuaranteedRef { record in
                        if visits.contains(record) { return }
                        // A filtered subscription that does not pass leaves the customer to its other ones.
                        if let wanted = subscription.from, !Self.sameBytes(wanted, sender) { return }
                        // A queue group's member is only a candidate: one member per group is chosen afterwards.
                        if let group = subscription.group {
                            groups.add(record, to: group)
                            return
                        }
                        // A retained customer is borrowed from the record (a `let` the snapshot keeps alive): no
                        // reference counting per delivery. A weak one is loaded, and purged once released. Without
                        // `plain`, a plain subscriber is only marked: it has the message through another copy.
                        if record.retainedCustomer != nil {
                            visits.insert(record)
                            // Called through the optional in place, so the customer is borrowed, not copied.
                            if plain, record.retainedCustomer?.receive(message, on: number) == true { accepted += 1 }
                        } else if let customer = record.weakCustomer {
                            visits.insert(record)
                            if plain, customer.receive(message, on: number) { accepted += 1 }
                        } else {
                            purge(record)
                        }
                    }
                }
            }
        }
        return accepted
    }

    /// Client names, like numbers, are bytes: canonically equivalent spellings are different names.
    @inline(__always)
    @inlinable static func sameName(_ wanted: String, _ sender: String?) -> Bool {
        sameBytes(wanted, sender)
    }

    @inline(__always)
    @inlinable static func sameBytes(_ wanted: String, _ sender: String?) -> Bool {
        guard let sender else { return false }
        return wanted.utf8.elementsEqual(sender.utf8)
    }

    @inlinable func countLive(_ subscriptions: [Subscription<Message>], visits: inout Visits<Message>) -> Int {
        var count = 0
        for subscription in subscriptions where subscription.isActive {
            let record = subscription.record
            if visits.contains(record) { continue }
            guard record.customer != nil else {
                purge(record)
                continue
            }
            visits.insert(record)
            count += 1
        }
        return count
    }
}

/// The members of queue groups that match one message, gathered while the other subscribers are served. Nothing is
/// allocated for a message that matches no group.
@usableFromInline struct GroupCandidates<Message> {
    /// Each group that matched, in the order first met, with its matching members (once each, in subscription
    /// order), and where each group is in it, by its bytes (canonically equivalent spellings are different groups).
    /// Nil until the first group, so a send that meets none has no collection to release.
    @usableFromInline var table:
        (groups: [(name: String, members: [CustomerRecord<Message>])], positions: [NameKey: Int])?

    /// No group yet.
    @inlinable init() {}

    /// Each group that matched, in the order first met, with its matching members.
    @inlinable var groups: [(name: String, members: [CustomerRecord<Message>])] { table?.groups ?? [] }

    /// True when no group matched.
    @inlinable var isEmpty: Bool { table == nil }

    /// Adds `record` as a candidate of `group` (once, however many of its subscriptions in the group match).
    @inlinable mutating func add(_ record: CustomerRecord<Message>, to group: String) {
        let key = NameKey(group)
        if table == nil { table = ([], [:]) }
        if let position = table!.positions[key] {
            if !(table!.groups[position].members.contains { $0 === record }) {
                table!.groups[position].members.append(record)
            }
        } else {
            table!.positions[key] = table!.groups.count
            table!.groups.append((group, [record]))
        }
    }
}

extension SubscriptionCenter {
    /// The entry of `number` for a send: a publisher sends to a few numbers again and again, and the daemon's parser
    /// hands it the same `String` each time (its number cache), so the entries of recent sends are kept and found
    /// again by the string's bits (``SentEntryCache``); any other string is looked up.
    @inline(__always)
    @inlinable func entry(forSending number: String) -> NumberEntry<Message>? {
        if let entry = sentEntries.entry(for: number) { return entry }
        guard let entry = numbers[NameKey(number)] else { return nil }
        sentEntries.remember(entry, for: number)
        return entry
    }
}
