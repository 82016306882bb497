/// The value of `--format` of the commands that print a report (status, du,
/// explain, sweep): text for a person, or JSON Lines for a program.
package enum OutputFormat: String, CaseIterable, Sendable {
  case text, json
}
