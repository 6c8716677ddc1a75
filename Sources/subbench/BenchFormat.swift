/// Number formatting for the report lines, without Foundation's locale-dependent formatters.
enum BenchFormat {
    /// `4032000` as `4,032,000`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return value < 0 ? "-" + result : result
    }

    /// A report line such as `published   500000 msgs in 1.234 s = 405,000 msgs/s`, the count right-aligned in
    /// `width` columns.
    static func throughput(_ label: String, _ count: Int, nanoseconds: UInt64, width: Int) -> String {
        "\(label) \(padded(count, width: width)) msgs in \(seconds(nanoseconds)) s = "
            + "\(rate(count, nanoseconds: nanoseconds)) msgs/s"
    }

    /// `value` right-aligned in `width` columns.
    static func padded(_ value: Int, width: Int) -> String {
        let text = String(value)
        return String(repeating: " ", count: max(0, width - text.count)) + text
    }

    /// Nanoseconds as seconds with three decimals, e.g. `1.234`.
    static func seconds(_ nanoseconds: UInt64) -> String {
        decimals(Double(nanoseconds) / 1e9, places: 3)
    }

    /// Nanoseconds as milliseconds with three decimals, e.g. `0.052`.
    static func milliseconds(_ nanoseconds: UInt64) -> String {
        decimals(Double(nanoseconds) / 1e6, places: 3)
    }

    /// Events per second over `nanoseconds`, grouped, e.g. `405,000`.
    static func rate(_ count: Int, nanoseconds: UInt64) -> String {
        guard nanoseconds > 0 else { return "-" }
        return grouped(Int((Double(count) * 1e9 / Double(nanoseconds)).rounded()))
    }

    /// Bytes as mebibytes with one decimal, e.g. `23.4`.
    static func mebibytes(_ bytes: Int) -> String {
        decimals(Double(bytes) / 1_048_576, places: 1)
    }

    /// The `fraction` (0...1) percentile of `samples` by nearest rank; 0 for no samples.
    static func percentile(_ sorted: [UInt64], _ fraction: Double) -> UInt64 {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count, max(1, rank)) - 1]
    }

    /// `value` with exactly `places` decimals.
    static func decimals(_ value: Double, places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = Int((value * scale).rounded())
        let whole = scaled / Int(scale)
        let fraction = String(scaled % Int(scale))
        guard places > 0 else { return String(whole) }
        return "\(whole)." + String(repeating: "0", count: places - fraction.count) + fraction
    }
}
