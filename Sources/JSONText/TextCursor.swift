/// Writes text into memory set aside beforehand, a byte at a time with no check per byte: the
/// fixed-shape lines `decode` writes hundreds of thousands a second (``Advertisement/appendJSONLine(at:to:)``).
/// Whoever sets the memory aside bounds what is written (``appending(to:atMost:_:)``).
package struct TextCursor {
    private let base: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    /// Bytes written so far.
    package private(set) var count = 0

    /// Runs `body` on a cursor over `capacity` bytes, then appends what it wrote to `out`. `body`
    /// must write at most `capacity` bytes (a shape known beforehand); more stops the program (a
    /// programming error, never a memory overrun).
    package static func appending(to out: inout [UInt8], atMost capacity: Int, _ body: (inout TextCursor) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
            guard let base = buffer.baseAddress else { return }
            var cursor = TextCursor(base: base, capacity: capacity)
            body(&cursor)
            out.append(contentsOf: UnsafeBufferPointer(start: base, count: cursor.count))
        }
    }

    private init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    @inline(__always)
    package mutating func put(_ byte: UInt8) {
        precondition(count < capacity, "a TextCursor was given less room than its text")
        base[count] = byte
        count += 1
    }

    /// Literal text.
    @inline(__always)
    package mutating func put(_ text: StaticString) {
        let length = text.utf8CodeUnitCount
        precondition(count + length <= capacity, "a TextCursor was given less room than its text")
        (base + count).update(from: text.utf8Start, count: length)
        count += length
    }

    /// A whole number in decimal, as `String(value)` writes it (at most 20 bytes).
    package mutating func put(_ value: Int) {
        if value < 0 { put(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits = 0
        var scan = magnitude
        repeat {
            digits += 1
            scan /= 10
        } while scan > 0
        var index = count + digits - 1
        precondition(count + digits <= capacity, "a TextCursor was given less room than its text")
        repeat {
            base[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
            index -= 1
        } while magnitude > 0
        count += digits
    }

    /// `value` (not negative) in exactly `width` decimal digits, zeros first.
    package mutating func put(_ value: Int64, width: Int) {
        precondition(count + width <= capacity, "a TextCursor was given less room than its text")
        var rest = value
        for index in stride(from: count + width - 1, through: count, by: -1) {
            base[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        count += width
    }

    /// The upper-case hex digits of `byte`.
    @inline(__always)
    package mutating func putHex(_ byte: UInt8) {
        put(HexDigits.upper[Int(byte >> 4)])
        put(HexDigits.upper[Int(byte & 0xF)])
    }
}
