/// `bytes` for a person: `512 B`, `1.2 KiB`, `3.4 GiB` (powers of 1024,
/// one decimal).
package func humanSize(_ bytes: Int64) -> String {
  let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
  guard bytes >= 1024 else { return "\(bytes) B" }
  var value = Double(bytes)
  var unit = 0
  while value >= 1024 && unit < units.count - 1 {
    value /= 1024
    unit += 1
  }
  // One decimal, rounded; 1023.96 KiB reads as 1.0 MiB rather than 1024.0 KiB.
  var tenths = (value * 10).rounded()
  if tenths >= 10240 && unit < units.count - 1 {
    unit += 1
    tenths = (tenths / 1024).rounded()
  }
  let whole = Int(tenths) / 10
  return "\(whole).\(Int(tenths) % 10) \(units[unit])"
}
