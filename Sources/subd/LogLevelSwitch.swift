import Logging
import Synchronization

/// subd's one log level, shared by every logger and changed in place by a reload (SIGHUP).
final class LogLevelSwitch: Sendable {
    private static let levels = Logger.Level.allCases
    private let index: Atomic<Int>

    /// Starts at `level`.
    init(_ level: Logger.Level) {
        index = Atomic(Self.levels.firstIndex(of: level) ?? 0)
    }

    /// The level in force; a change applies to the next log call of every logger.
    var level: Logger.Level {
        get { Self.levels[index.load(ordering: .relaxed)] }
        set { index.store(Self.levels.firstIndex(of: newValue) ?? 0, ordering: .relaxed) }
    }
}
