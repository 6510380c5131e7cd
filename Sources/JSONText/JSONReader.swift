/// Reads a JSON document into a ``JSONValue`` straight from its bytes.
///
/// Fleet payloads, trace lines and command payloads arrive at event rates; `JSONDecoder` spent
/// about 17 µs on a 150-byte Theengs report (issue 17's profile), this reader about a tenth of that.
/// It accepts exactly what `JSONDecoder` accepts for a UTF-8 document, with the same values
/// (the `json` fuzz target and `JSONReaderTests` hold them equal):
/// - RFC 8259 grammar, plus one trailing comma after an array's or object's last member, and a
///   UTF-8 byte order mark before the document;
/// - at most 512 nested arrays and objects;
/// - strings must be valid UTF-8 without raw control characters; `\u` escapes pair surrogates and
///   a lone surrogate is an error;
/// - numbers are read as the nearest `Double`; one that overflows, or a non-zero one that
///   rounds to zero, is an error;
/// - a key seen twice keeps its first value (keys compare as Swift strings do).
///
/// Three differences, on purpose:
/// - `JSONDecoder` guesses UTF-16 and UTF-32 from NUL bytes and byte order marks; this reader
///   takes UTF-8 only (RFC 8259 section 8.1), so a NUL byte outside a `\u0000` escape is an error.
/// - `JSONDecoder` checks a value only when it decodes it, and it skips the value of a key given a
///   second time: there, invalid UTF-8, a raw tab, `"\x"` or `01` pass. This reader refuses them
///   wherever they are (``parse(_:skippingRepeatedValues:)`` reads as `JSONDecoder` does, to
///   compare the two).
/// - `JSONDecoder` refuses some zeros written with an exponent (`0e1`, `-0.0e1`, while it reads
///   `0e0` and `0e+5`); this reader reads every one as 0, as the grammar says.
package enum JSONReader {
    /// The deepest nesting of arrays and objects read.
    package static let maximumDepth = 512

    /// The document's value, or `nil` when it is not one JSON document.
    package static func parse(_ bytes: some Sequence<UInt8>) -> JSONValue? {
        if let value = bytes.withContiguousStorageIfAvailable({ parse(buffer: $0) }) { return value }
        return Array(bytes).withUnsafeBufferPointer { parse(buffer: $0) }
    }

    /// The document as `JSONDecoder` reads it: the value of a key given a second time is skipped
    /// as its scanner skips it (to the end of the string, the brackets, or the run of other
    /// bytes), unchecked. Only for comparing the two readers (the third difference).
    package static func parse(_ bytes: [UInt8], skippingRepeatedValues: Bool) -> JSONValue? {
        bytes.withUnsafeBufferPointer { parse(buffer: $0, skippingRepeatedValues: skippingRepeatedValues) }
    }

    /// The document's fields when it is an object; `nil` for anything else.
    package static func object(_ bytes: some Sequence<UInt8>) -> [String: JSONValue]? {
        guard case .object(let fields)? = parse(bytes) else { return nil }
        return fields
    }

    static func parse(buffer: UnsafeBufferPointer<UInt8>, skippingRepeatedValues: Bool = false) -> JSONValue? {
        var cursor = Cursor(buffer)
        cursor.skippingRepeatedValues = skippingRepeatedValues
        if cursor.remaining >= 3, cursor.peek(0) == 0xEF, cursor.peek(1) == 0xBB, cursor.peek(2) == 0xBF {
            cursor.position += 3
        }
        guard let value = cursor.value(depth: 0) else { return nil }
        cursor.skipWhitespace()
        return cursor.atEnd ? value : nil
    }

    fileprivate struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0
        var skippingRepeatedValues = false

        init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        var atEnd: Bool { position >= bytes.count }
        var remaining: Int { bytes.count - position }

        /// The byte `offset` ahead of the position; 0 past the end (a NUL is never valid JSON).
        func peek(_ offset: Int = 0) -> UInt8 {
            let index = position + offset
            return index < bytes.count ? bytes[index] : 0
        }

        mutating func skipWhitespace() {
            while position < bytes.count {
                switch bytes[position] {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) -> JSONValue? {
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: "{"): return object(depth: depth + 1)
            case UInt8(ascii: "["): return array(depth: depth + 1)
            case UInt8(ascii: "\""): return string().map { .string($0) }
            case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return literal("null") ? .null : nil
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number().map { .number($0) }
            default: return nil
            }
        }

        /// Skips a value unchecked, as `JSONDecoder`'s scanner does: a string to its closing quote
        /// (a backslash takes the next byte, `\u` the next four), brackets to their match, anything
        /// else to the next `,`, `]`, `}` or whitespace.
        mutating func skip(depth: Int) -> Bool {
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: "\""):
                position += 1
                while position < bytes.count {
                    switch bytes[position] {
                    case UInt8(ascii: "\""):
                        position += 1
                        return true
                    case UInt8(ascii: "\\"): position += peek(1) == UInt8(ascii: "u") ? 6 : 2
                    default: position += 1
                    }
                }
                return false
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard depth + 1 <= JSONReader.maximumDepth else { return false }
                let close = peek() == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                position += 1
                while true {
                    skipWhitespace()
                    switch peek() {
                    case close:
                        position += 1
                        return true
                    case UInt8(ascii: ","), UInt8(ascii: ":"): position += 1
                    case 0 where atEnd: return false
                    default: guard skip(depth: depth + 1) else { return false }
                    }
                }
            default:
                let start = position
                while position < bytes.count {
                    switch bytes[position] {
                    case UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), 0x20, 0x09, 0x0A, 0x0D:
                        return position > start
                    default: position += 1
                    }
                }
                return position > start
            }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard remaining >= count else { return false }
            let text = word.utf8Start
            for offset in 0..<count where bytes[position + offset] != text[offset] { return false }
            position += count
            return true
        }

        mutating func array(depth: Int) -> JSONValue? {
            guard depth <= JSONReader.maximumDepth else { return nil }
            position += 1
            var items: [JSONValue] = []
            skipWhitespace()
            if peek() == UInt8(ascii: "]") {
                position += 1
                return .array(items)
            }
            while true {
                guard let item = value(depth: depth) else { return nil }
                items.append(item)
                guard let closed = endOfMember(UInt8(ascii: "]")) else { return nil }
                if closed { return .array(items) }
            }
        }

        mutating func object(depth: Int) -> JSONValue? {
            guard depth <= JSONReader.maximumDepth else { return nil }
            position += 1
            var fields: [String: JSONValue] = [:]
            skipWhitespace()
            if peek() == UInt8(ascii: "}") {
                position += 1
                return .object(fields)
            }
            while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\""), let key = string() else { return nil }
                skipWhitespace()
                guard peek() == UInt8(ascii: ":") else { return nil }
                position += 1
                if skippingRepeatedValues, fields[key] != nil {
                    guard skip(depth: depth) else { return nil }
                } else {
                    guard let item = value(depth: depth) else { return nil }
                    if fields[key] == nil { fields[key] = item }  // the first of a repeated key wins
                }
                guard let closed = endOfMember(UInt8(ascii: "}")) else { return nil }
                if closed { return .object(fields) }
            }
        }

        /// After an array's or object's member: `true` at its `close` (taken), `false` after a
        /// comma with more to come, `nil` for anything else. One trailing comma before `close` is
        /// taken, as `JSONDecoder` takes it.
        mutating func endOfMember(_ close: UInt8) -> Bool? {
            skipWhitespace()
            switch peek() {
            case close:
                position += 1
                return true
            case UInt8(ascii: ","):
                position += 1
                skipWhitespace()
                guard peek() == close else { return false }
                position += 1
                return true
            default:
                return nil
            }
        }

        /// A string literal at the position (its opening quote).
        mutating func string() -> String? {
            position += 1
            let start = position
            var ascii = true
            // The common case: no escape, so the text is the bytes between the quotes.
            while position < bytes.count {
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") {
                    let text = UnsafeBufferPointer(rebasing: bytes[start..<position])
                    position += 1
                    if ascii { return String(decoding: text, as: UTF8.self) }
                    return String(validating: text, as: UTF8.self)
                }
                if byte == UInt8(ascii: "\\") { break }
                if byte < 0x20 { return nil }
                if byte >= 0x80 { ascii = false }
                position += 1
            }
            guard position < bytes.count else { return nil }
            var out = Array(UnsafeBufferPointer(rebasing: bytes[start..<position]))
            while position < bytes.count {
                let byte = bytes[position]
                switch byte {
                case UInt8(ascii: "\""):
                    position += 1
                    return String(validating: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard escape(into: &out) else { return nil }
                case 0..<0x20:
                    return nil
                default:
                    out.append(byte)
                    position += 1
                }
            }
            return nil
        }

        /// An escape at the position (its backslash), appended as UTF-8.
        mutating func escape(into out: inout [UInt8]) -> Bool {
            let letter = peek(1)
            position += 2
            switch letter {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(letter)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard let unit = hexUnit() else { return false }
                var scalar = UInt32(unit)
                if (0xD800..<0xDC00).contains(unit) {
                    guard peek() == UInt8(ascii: "\\"), peek(1) == UInt8(ascii: "u") else { return false }
                    position += 2
                    guard let low = hexUnit(), (0xDC00..<0xE000).contains(low) else { return false }
                    scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                } else if (0xDC00..<0xE000).contains(unit) {
                    return false
                }
                guard let value = Unicode.Scalar(scalar), let encoded = UTF8.encode(value) else { return false }
                out.append(contentsOf: encoded)
            default: return false
            }
            return true
        }

        /// Four hexadecimal digits at the position.
        mutating func hexUnit() -> UInt16? {
            guard remaining >= 4 else { return nil }
            var unit: UInt16 = 0
            for _ in 0..<4 {
                let byte = bytes[position]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                unit = unit << 4 | UInt16(digit)
                position += 1
            }
            return unit
        }

        /// A number at the position: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
        mutating func number() -> Double? {
            let start = position
            let negative = peek() == UInt8(ascii: "-")
            if negative { position += 1 }
            // Up to 19 significant digits kept exactly, for the quick conversion.
            var mantissa: UInt64 = 0
            var digits = 0
            var nonZero = false
            var scale = 0  // the power of ten the mantissa's last digit stands for
            func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
            func take(_ byte: UInt8) {
                let digit = UInt64(byte - UInt8(ascii: "0"))
                if digit != 0 { nonZero = true }
                if mantissa == 0, digit == 0 { return }  // leading zeros are not significant
                digits += 1
                if digits <= 19 { mantissa = mantissa &* 10 &+ digit }
            }
            if peek() == UInt8(ascii: "0") {
                position += 1
                if isDigit(peek()) { return nil }
            } else if isDigit(peek()) {
                while isDigit(peek()) {
                    take(peek())
                    if digits > 19 { scale += 1 }
                    position += 1
                }
            } else {
                return nil
            }
            if peek() == UInt8(ascii: ".") {
                position += 1
                guard isDigit(peek()) else { return nil }
                while isDigit(peek()) {
                    take(peek())
                    if digits <= 19 { scale -= 1 }  // kept, or a zero before the first kept digit
                    position += 1
                }
            }
            var exponent = 0
            if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
                position += 1
                var negativeExponent = false
                if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") {
                    negativeExponent = peek() == UInt8(ascii: "-")
                    position += 1
                }
                guard isDigit(peek()) else { return nil }
                while isDigit(peek()) {
                    // Saturates: any exponent this large overflows or underflows anyway.
                    if exponent < 100_000 { exponent = exponent * 10 + Int(peek() - UInt8(ascii: "0")) }
                    position += 1
                }
                if negativeExponent { exponent = -exponent }
            }
            guard nonZero else { return negative ? -0.0 : 0.0 }
            // Clinger's fast path: an exact mantissa and an exact power of ten make one correctly
            // rounded operation.
            let power = scale + exponent
            if digits <= 15, (-22...22).contains(power) {
                let value = Double(mantissa)
                let result = power < 0 ? value / Self.powersOfTen[-power] : value * Self.powersOfTen[power]
                return negative ? -result : result
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
            guard let result = Double(text), result.isFinite, result != 0 else { return nil }
            return result
        }

        static let powersOfTen: [Double] = (0...22).map { exponent in
            var value = 1.0
            for _ in 0..<exponent { value *= 10 }
            return value
        }
    }
}

extension JSONReader {
    /// Whether `value`, read from `bytes`, holds a zero and `bytes` an exponent: where `JSONDecoder`
    /// may refuse what this reader reads (the type's second difference).
    package static func mayBeZeroWithExponent(_ value: JSONValue, _ bytes: [UInt8]) -> Bool {
        func zero(_ value: JSONValue) -> Bool {
            switch value {
            case .number(let number): number == 0
            case .array(let items): items.contains(where: zero)
            case .object(let fields): fields.values.contains(where: zero)
            case .null, .bool, .string: false
            }
        }
        return bytes.contains { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") } && zero(value)
    }
}

extension JSONValue {
    /// Equal, and written alike: numbers bit for bit (`-0` is not `0`), strings and keys byte for
    /// byte (`==` on strings compares canonical equivalents equal).
    package static func identical(_ a: JSONValue?, _ b: JSONValue?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (.number(let x)?, .number(let y)?): return x.bitPattern == y.bitPattern
        case (.string(let x)?, .string(let y)?): return x.utf8.elementsEqual(y.utf8)
        case (.array(let x)?, .array(let y)?): return x.count == y.count && zip(x, y).allSatisfy { identical($0, $1) }
        case (.object(let x)?, .object(let y)?):
            return x.count == y.count
                && x.allSatisfy { key, value in
                    guard let index = y.index(forKey: key), y[index].key.utf8.elementsEqual(key.utf8) else {
                        return false
                    }
                    return identical(value, y[index].value)
                }
        default: return a == b
        }
    }
}

extension JSONReader {
    /// A scalar member's value in ``flatObject(_:_:)``.
    package enum FlatValue {
        case number(Double)
        /// A string of printable ASCII without escapes: its bytes' positions, quotes excluded.
        case text(Range<Int>)
        case null
    }

    /// Reads `buffer` as one object whose members are numbers, plain strings and `null`, calling
    /// `member` with each key's and value's positions in order; `false` when the document is
    /// anything else, or `member` said `false`.
    ///
    /// A quick path for readers of small known documents (trace lines): what it takes it reads
    /// as ``parse(_:)`` does, number for number; what it refuses (escapes, non-ASCII text, `true`,
    /// nested values, a trailing comma, a byte order mark), ``parse(_:)`` then judges.
    package static func flatObject(
        _ buffer: UnsafeBufferPointer<UInt8>, _ member: (_ key: Range<Int>, _ value: FlatValue) -> Bool
    ) -> Bool {
        var cursor = Cursor(buffer)
        cursor.skipWhitespace()
        guard cursor.peek() == UInt8(ascii: "{") else { return false }
        cursor.position += 1
        cursor.skipWhitespace()
        if cursor.peek() == UInt8(ascii: "}") {
            cursor.position += 1
        } else {
            while true {
                cursor.skipWhitespace()
                guard let key = cursor.plainString() else { return false }
                cursor.skipWhitespace()
                guard cursor.peek() == UInt8(ascii: ":") else { return false }
                cursor.position += 1
                cursor.skipWhitespace()
                let value: FlatValue
                switch cursor.peek() {
                case UInt8(ascii: "\""):
                    guard let text = cursor.plainString() else { return false }
                    value = .text(text)
                case UInt8(ascii: "n"):
                    guard cursor.literal("null") else { return false }
                    value = .null
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    guard let number = cursor.shortInteger() ?? cursor.number() else { return false }
                    value = .number(number)
                default:
                    return false
                }
                guard member(key, value) else { return false }
                cursor.skipWhitespace()
                if cursor.peek() == UInt8(ascii: ",") {
                    cursor.position += 1
                    continue
                }
                guard cursor.peek() == UInt8(ascii: "}") else { return false }
                cursor.position += 1
                break
            }
        }
        cursor.skipWhitespace()
        return cursor.atEnd
    }
}

extension JSONReader.Cursor {
    /// An integer of one to nine digits at the position, the value ``number()`` reads; `nil`
    /// (the position unmoved) for any other number.
    fileprivate mutating func shortInteger() -> Double? {
        var index = position
        let negative = peek() == UInt8(ascii: "-")
        if negative { index += 1 }
        let first = index
        var value = 0
        while index < bytes.count, index - first < 10, bytes[index] >= 48, bytes[index] <= 57 {
            value = value * 10 + Int(bytes[index] - 48)
            index += 1
        }
        let digits = index - first
        guard digits >= 1, digits <= 9, !(digits > 1 && bytes[first] == 48) else { return nil }
        if index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), 48...57: return nil
            default: break
            }
        }
        position = index
        return negative ? -Double(value) : Double(value)
    }

    /// A string of printable ASCII without escapes at the position (its opening quote): the
    /// positions of its bytes; `nil` for any other string.
    fileprivate mutating func plainString() -> Range<Int>? {
        guard peek() == UInt8(ascii: "\"") else { return nil }
        position += 1
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return start..<(position - 1)
            }
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
            position += 1
        }
        return nil
    }
}
