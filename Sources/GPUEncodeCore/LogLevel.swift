/// What a line given to a run's `log` callback is: a note (shown with -v) or a warning (always shown).
public enum LogLevel: Sendable { case info, warning }
