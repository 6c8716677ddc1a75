import SubscriptionWire

/// The wildcard subscriptions, in a token trie as in nats-server's `sublist.go`: one node per token, with a
/// dictionary of literal tokens, one slot for `*` and one list for patterns that end in `>` right after it.
///
/// Only patterns holding a wildcard are stored here; exact subscriptions hang off their number.
/// Every change bumps ``generation``, which invalidates cached match results.
@usableFromInline struct WildcardTrie<Message> {
    @usableFromInline let root = TrieNode<Message>()
    /// Bumped on every insertion and removal.
    @usableFromInline var generation: UInt64 = 0
    /// How many subscriptions are stored (0 means sends never need the trie).
    @usableFromInline var count = 0
    /// How many times ``collect(matching:into:)`` walked the trie (for tests).
    @usableFromInline var walks = 0

    /// An empty trie.
    @inlinable init() {}

    /// Whether no wildcard subscription exists.
    @inlinable var isEmpty: Bool { count == 0 }

    /// How many nodes hang below the root (for tests: empty nodes must be deleted).
    @inlinable var nodeCount: Int { root.descendantCount }

    /// Stores a subscription under a wildcard pattern, given as its tokens. The record must have none there yet.
    @inlinable mutating func insert(_ subscription: Subscription<Message>, tokens: [NameKey]) {
        var node = root
        for (index, token) in tokens.enumerated() {
            if index == tokens.count - 1 && token == ">" {
                node.rest.append(subscription)
                return bump(by: 1)
            }
            node = node.child(token, create: true)!
        }
        node.terminal.append(subscription)
        bump(by: 1)
    }

    /// The record's subscription under the pattern, if any.
    @inlinable func subscription(of record: CustomerRecord<Message>, tokens: [NameKey]) -> Subscription<Message>? {
        var node = root
        for (index, token) in tokens.enumerated() {
            if index == tokens.count - 1 && token == ">" { return node.rest.subscription(of: record) }
            guard let child = node.child(token, create: false) else { return nil }
            node = child
        }
        return node.terminal.subscription(of: record)
    }

    /// Removes (and deactivates) the record's subscription under the pattern, deleting nodes left empty.
    @discardableResult
    @inlinable mutating func remove(_ record: CustomerRecord<Message>, tokens: [NameKey]) -> Subscription<Message>? {
        guard let removed = remove(record, tokens: tokens, at: 0, below: root) else { return nil }
        bump(by: -1)
        return removed
    }

    /// Appends every subscription whose pattern matches the number (given as its tokens) to `matches`.
    @inlinable mutating func collect(matching tokens: [NameKey], into matches: inout [Subscription<Message>]) {
        walks += 1
        collect(tokens, at: 0, below: root, into: &matches)
    }

    @inlinable mutating func bump(by delta: Int) {
        count += delta
        generation &+= 1
    }

    @inlinable func remove(
        _ record: CustomerRecord<Message>,
        tokens: [NameKey],
        at index: Int,
        below node: TrieNode<Message>
    ) -> Subscription<Message>? {
        let token = tokens[index]
        let isLast = index == tokens.count - 1
        if isLast && token == ">" { return node.rest.remove(record) }
        guard let child = node.child(token, create: false) else { return nil }
        let removed =
            isLast
            ? child.terminal.remove(record)
            : remove(record, tokens: tokens, at: index + 1, below: child)
        if removed != nil && child.isEmpty { node.removeChild(token) }
        return removed
    }

    @inlinable func collect(
        _ tokens: [NameKey],
        at index: Int,
        below node: TrieNode<Message>,
        into matches: inout [Subscription<Message>]
    ) {
        if index == tokens.count {
            matches.append(contentsOf: node.terminal.items)
            return
        }
        if let literal = node.literals[tokens[index]] { collect(tokens, at: index + 1, below: literal, into: &matches) }
        // A wildcard first token does not match the daemon's own numbers (`$SYS.`): Names.matches's rule.
        if index == 0 && Names.isSystemToken(tokens[0].string.utf8) { return }
        // `>` matches the one or more tokens left.
        matches.append(contentsOf: node.rest.items)
        if let star = node.star { collect(tokens, at: index + 1, below: star, into: &matches) }
    }
}

/// One level of the ``WildcardTrie``.
///
/// **Exclusivity.** Its `#if !DEBUG @exclusivity(unchecked)` properties keep the invariant stated on
/// ``SubscriptionCenter`` (release builds skip their checks; debug builds check them).
@usableFromInline final class TrieNode<Message> {
    /// Children for literal tokens.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var literals: [NameKey: TrieNode] = [:]
    /// The child for a `*` token.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var star: TrieNode?
    /// Subscriptions whose pattern ends at this node.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var terminal = SubscriberList<Message>()
    /// Subscriptions whose pattern ends with `>` right after this node (`>` alone: the root's).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var rest = SubscriberList<Message>()

    /// A node with nothing below it.
    @inlinable init() {}

    /// Whether the node holds nothing and can be deleted.
    @inlinable var isEmpty: Bool { literals.isEmpty && star == nil && terminal.isEmpty && rest.isEmpty }

    /// The child for a token (`*` or a literal), made when missing if `create` is true.
    @inlinable func child(_ token: NameKey, create: Bool) -> TrieNode? {
        if token == "*" {
            if star == nil && create { star = TrieNode() }
            return star
        }
        if let existing = literals[token] { return existing }
        guard create else { return nil }
        let made = TrieNode()
        literals[token] = made
        return made
    }

    /// How many nodes hang below this one.
    @inlinable var descendantCount: Int {
        literals.values.reduce(literals.count) { $0 + $1.descendantCount } + (star.map { 1 + $0.descendantCount } ?? 0)
    }

    /// Deletes the child for a token.
    @inlinable func removeChild(_ token: NameKey) {
        if token == "*" { star = nil } else { literals[token] = nil }
    }
}
