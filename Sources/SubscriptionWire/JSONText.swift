/// JSON text pieces the project writes by hand (`$SYS.` payloads, `subctl --json` lines): one escaping rule for
/// all of them.
public enum JSONText {
    /// `text` as a JSON string: quotes, backslashes and control characters (and DEL) escaped, the rest as is.
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let digits: [Character] = Array("0123456789abcdef")
                out += "\\u00" + String(digits[Int(scalar.value >> 4)]) + String(digits[Int(scalar.value & 15)])
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
