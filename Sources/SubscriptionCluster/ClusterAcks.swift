import DequeModule
import Dispatch
import SubscriptionNATS

/// What the bridge keeps for the cross-node `+OK <receivers>` (docs/CLUSTER.md, step 4): the publications waiting
/// for confirmations, the other nodes' interest, and this node's own entry in the bucket `subd_interest`. One stored
/// property of ``ClusterBridge``; the work is in `ClusterBridge+Acks.swift` and `ClusterBridge+Interest.swift`.
struct ClusterAcks {
    /// The name of the interest bucket.
    static let bucketName = "subd_interest"
    /// How often a node puts its entry again (also when nothing changed), and forgets the silent ones.
    static let heartbeat: DispatchTimeInterval = .seconds(10)
    /// The largest entry a node puts: past it (thousands of distinct patterns) the entry says `>` (every number), so
    /// publishers wait for this node's confirmation (or their timeout) for every number, never missing it.
    static let maxEntryBytes = 256 * 1024

    /// The publications waiting.
    var pending = PendingAcks()
    /// Each waiting publication's ticket and deadline (``now()`` nanoseconds; a publication's from the turn's shared
    /// reading, ``publicationClock()``), in the order they began to wait, and their deadlines never decreasing
    /// (``addDeadline(of:at:)``). One timer at a time sweeps the front (``ClusterBridge/sweepDeadlines()``); a
    /// publication answered before is skipped then, or taken out before the timer is set
    /// (``dropAnsweredDeadlines()``).
    var deadlines = Deque<(ticket: UInt64, deadline: UInt64)>()
    /// The least time between two sweeps, in nanoseconds.
    static let sweepGranularity: UInt64 = 1_000_000
    /// True while the sweep timer is set.
    var isSweepScheduled = false
    /// This turn's confirmations to other nodes, by reply subject: sent together at the end of the turn, one NATS
    /// message per subject (``ClusterBridge/sendConfirmations()``).
    var outgoing: [String: ConfirmationBatch] = [:]
    /// The other nodes' patterns.
    var directory = InterestDirectory()
    /// The confirmations' subscription (`subd.ack.<origin>`), once made.
    var confirmationsSID: UInt64?
    /// The interest bucket, once made or opened.
    var bucket: KeyValueBucket?
    /// Its watcher.
    var watcher: KeyValueWatcher?
    /// True while a make-or-open of the bucket is under way.
    var isOpening = false
    /// True while this node's entry is being put; ``needsPut`` asks for one more after it (puts go one at a time, so
    /// the last one stored is the newest).
    var isPutting = false
    /// The patterns changed while a put was under way.
    var needsPut = false
    /// True while this node's entry says `>` (its patterns past ``maxEntryBytes``): every number's writer may wait
    /// for it.
    var entrySaysEverything = false
    /// The heartbeat timer.
    var timer: DispatchSourceTimer?

    /// Deadlines of answered publications kept at most, beyond twice those waiting.
    static let deadlinesSlack = 1_024

    /// Adds `ticket`'s deadline (``deadlines``). Answered publications leave theirs behind until the sweep reaches
    /// them: at a high rate and a long `ack_timeout` those would pile up, so past twice the publications waiting
    /// (plus ``deadlinesSlack``) they go at once; amortized, each deadline is dropped once. Deadlines never decrease:
    /// the sweep, once it answered those due, takes out the answered ones behind them (``dropAnsweredDeadlines()``)
    /// and waits `deadline - now` (unsigned) for the new front, which must not be due. A publication's deadline, from
    /// the turn's shared reading (``publicationClock()``), would be before the last one's only after a fresh reading
    /// in the same turn (no path makes one today: bucket writes are answered in the NATS client's turns); it is moved
    /// up to it.
    mutating func addDeadline(of ticket: UInt64, at deadline: UInt64) {
        if deadlines.count >= 2 * pending.count + Self.deadlinesSlack {
            let pending = pending  // not read inside the change of `deadlines` (exclusive access to self)
            deadlines.removeAll { !pending.isWaiting($0.ticket) }
        }
        deadlines.append((ticket, max(deadline, deadlines.last?.deadline ?? 0)))
    }

    /// The reading of the clock this turn's publications share (``publicationClock()``), and how many more may.
    private var clockReading: UInt64 = 0
    private var clockUsesLeft = 0
    /// The most publications that share one reading of the clock.
    static let clockShares = 128

    /// The monotonic clock a publication's deadline and expectations start from: read once per ``clockShares``
    /// publications of a turn (a busy turn runs hundreds; a reading each was about 4% of node 1's samples under
    /// `ack: all`, perf), so a deadline may start early by the time up to that many publications take to run here,
    /// their local deliveries included: microseconds with a small local audience, against an `ack_timeout` of
    /// milliseconds (the turn's first publication already waited as long before its batch left, at the turn's end).
    /// ``endPublicationTurn()`` makes the next turn read it afresh.
    mutating func publicationClock() -> UInt64 {
        if clockUsesLeft == 0 {
            clockReading = Self.now()
            clockUsesLeft = Self.clockShares
        }
        clockUsesLeft -= 1
        return clockReading
    }

    /// The turn's publications were sent: the next publication reads the clock.
    mutating func endPublicationTurn() { clockUsesLeft = 0 }

    /// Takes out the deadlines at the front whose publications were answered (by their confirmations), so the sweep
    /// timer is set for the first one still waiting: with publications answered within milliseconds, a sweep about
    /// once per `ack_timeout` under a steady stream, not once per millisecond. Each deadline is taken out once.
    mutating func dropAnsweredDeadlines() {
        while let first = deadlines.first, !pending.isWaiting(first.ticket) { deadlines.removeFirst() }
    }

    /// Nanoseconds of the monotonic clock.
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}
