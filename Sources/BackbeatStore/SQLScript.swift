/// Splits a migration file into statements, since the extended query protocol runs one statement at a time.
///
/// Semicolons inside quotes, quoted identifiers, comments and dollar-quoted bodies do not split.
enum SQLScript {
    static func statements(in script: String) -> [String] {
        var statements: [String] = []
        var current = ""
        let chars = Array(script)
        var index = 0
        func flush() {
            let trimmed = current.trimmingWhitespace()
            if !trimmed.isEmpty { statements.append(trimmed) }
            current = ""
        }
        while index < chars.count {
            let char = chars[index]
            let next: Character? = index + 1 < chars.count ? chars[index + 1] : nil
            if char == "-" && next == "-" {
                while index < chars.count && chars[index] != "\n" { index += 1 }
                continue
            }
            if char == "/" && next == "*" {
                index += 2
                while index + 1 < chars.count && !(chars[index] == "*" && chars[index + 1] == "/") { index += 1 }
                index += 2
                continue
            }
            if char == "'" || char == "\"" {
                current.append(char)
                index += 1
                while index < chars.count {
                    current.append(chars[index])
                    if chars[index] == char { break }
                    index += 1
                }
                index += 1
                continue
            }
            if char == "$" {
                var end = index + 1
                while end < chars.count && (chars[end].isLetter || chars[end].isNumber || chars[end] == "_") { end += 1 }
                if end < chars.count && chars[end] == "$" {
                    let tag = String(chars[index...end])
                    current += tag
                    index = end + 1
                    while index < chars.count {
                        if chars[index] == "$" && String(chars[index..<min(chars.count, index + tag.count)]) == tag {
                            current += tag
                            index += tag.count
                            break
                        }
                        current.append(chars[index])
                        index += 1
                    }
                    continue
                }
            }
            if char == ";" {
                flush()
            } else {
                current.append(char)
            }
            index += 1
        }
        flush()
        return statements
    }
}

extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
