import BeaconCore
import Foundation
import JSONText
import Testing

/// The hand-written JSON reader reads what `JSONDecoder` reads, value for value: every case here
/// is checked against both, so a change in either shows.
@Suite struct JSONReaderTests {
    static let cases: [(String, JSONValue?)] = [
        (
            #"{"a":1,"b":"x","c":[true,false,null],"d":{}}"#,
            .object([
                "a": .number(1), "b": .string("x"), "c": .array([.bool(true), .bool(false), .null]), "d": .object([:]),
            ])
        ),
        (" \t\r\n 1 ", .number(1)),
        ("[1,]", .array([.number(1)])),
        (#"{"a":1 , }"#, .object(["a": .number(1)])),
        ("[,]", nil), ("[,1]", nil), ("{,}", nil), ("[1,,2]", nil), ("[1 2]", nil), ("[1]x", nil), ("1 2", nil),
        (#"{"a":1,"a":2}"#, .object(["a": .number(1)])),
        ("\u{FEFF}1", .number(1)), ("\u{FEFF}\u{FEFF}1", nil), ("\u{FEFF}", nil), ("", nil), ("   ", nil),
        ("01", nil), ("-01", nil), ("1.", nil), (".5", nil), ("+1", nil), ("-", nil), ("1e", nil), ("1.0e+", nil),
        ("NaN", nil), ("Infinity", nil), ("tru", nil), ("true1", nil), ("nul", nil), ("\u{0B}1", nil),
        ("-0", .number(-0.0)), ("0e-400", .number(0)), ("1E5", .number(100_000)), ("1e+5", .number(100_000)),
        ("1e400", nil), ("-1e400", nil), ("1e-400", nil), ("2e-324", nil),
        ("4.9e-324", .number(.leastNonzeroMagnitude)),
        ("1e-320", .number(Double(bitPattern: 2024))), ("1.7976931348623157e308", .number(.greatestFiniteMagnitude)),
        ("1.7976931348623159e308", nil), ("0.1", .number(0.1)), ("-59.5", .number(-59.5)),
        ("123456789012345678901234567890", .number(1.2345678901234568e29)),
        ("0.000001e6", .number(1)), ("12345678901234567890123", .number(1.2345678901234568e22)),
        (#""\"\\\/\b\f\n\r\t""#, .string("\"\\/\u{08}\u{0C}\n\r\t")),
        (#""\u0000\u00e9\ud83d\ude00""#, .string("\u{0}é😀")),
        (#""\ud800""#, nil), (#""\udc00\ud800""#, nil), (#""\uD83D\u0041""#, nil), (#""\u12""#, nil),
        (#""\uZZZZ""#, nil), (#""\x""#, nil), ("\"a\tb\"", nil), ("\"\u{7F}\"", .string("\u{7F}")),
        ("\"é\"", .string("é")), ("{1:2}", nil), (#"{"a":}"#, nil), (#"{"a"}"#, nil),
        (String(repeating: "[", count: 512) + String(repeating: "]", count: 512), Self.nested(512)),
        (String(repeating: "[", count: 513) + String(repeating: "]", count: 513), nil),
    ]

    static func nested(_ depth: Int) -> JSONValue {
        var value = JSONValue.array([])
        for _ in 1..<depth { value = .array([value]) }
        return value
    }

    @Test func readsWhatJSONDecoderReads() {
        for (text, expected) in Self.cases {
            let bytes = Array(text.utf8)
            #expect(JSONValue.identical(JSONReader.parse(bytes), expected), "\(text.prefix(60).debugDescription)")
            #expect(
                JSONValue.identical(JSONValue.decodedByFoundation(bytes), expected),
                "JSONDecoder: \(text.prefix(60).debugDescription)")
        }
    }

    @Test func aRepeatedKeyInAnotherSpellingKeepsTheFirst() {
        let bytes = Array(#"{"\u00e9":1,"e\u0301":2}"#.utf8)
        let ours = JSONReader.object(bytes)
        #expect(ours?.count == 1)
        #expect(ours?.first?.key.utf8.elementsEqual("é".utf8) == true)
        #expect(JSONValue.identical(.object(ours ?? [:]), JSONValue.decodedByFoundation(bytes)))
    }

    @Test func invalidUTF8AndNULBytesAreRefused() {
        for bytes: [UInt8] in [
            [0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0xFF, 0x31], [0x22, 0xED, 0xA0, 0x80, 0x22],
            [0x31, 0x00], [0x00, 0x31], [0x22, 0x61, 0x00, 0x22], [0x7B, 0x7D, 0x00],
        ] {
            #expect(JSONReader.parse(bytes) == nil, "\(bytes)")
        }
        // Also in the value of a repeated key, which JSONDecoder skips unchecked (as the reader
        // does when asked to, for comparing them).
        let repeated: [UInt8] = Array(#"{"a":"x","a":""#.utf8) + [0xD6, 0x61] + Array(#""}"#.utf8)
        #expect(JSONReader.parse(repeated) == nil)
        #expect(JSONValue.decodedByFoundation(repeated) == .object(["a": .string("x")]))
        #expect(JSONReader.parse(repeated, skippingRepeatedValues: true) == .object(["a": .string("x")]))
        for text in [#"{"a":1,"a":"\x"}"#, #"{"a":1,"a":01}"#, "{\"a\":1,\"a\":\"\t\"}", #"{"a":1,"a":[1,{"b":-}]}"#] {
            #expect(JSONReader.parse(Array(text.utf8)) == nil, "\(text)")
            #expect(JSONReader.parse(Array(text.utf8), skippingRepeatedValues: true) == .object(["a": .number(1)]))
            #expect(JSONValue.decodedByFoundation(Array(text.utf8)) == .object(["a": .number(1)]), "\(text)")
        }
        // Valid multi-byte UTF-8, raw and escaped, reads the same.
        #expect(JSONReader.parse(Array("\"Ω😀\"".utf8)) == .string("Ω😀"))
        #expect(JSONReader.parse(Array(#""Ω\n😀""#.utf8)) == .string("Ω\n😀"))
    }

    /// The second difference: every zero is 0, whatever its exponent (`JSONDecoder` refuses some).
    @Test func zeroWithAnExponentIsZero() {
        for text in ["0e1", "0e5", "-0.0e1", "0e0", "0e+5", "0.0e1", "[0E1]"] {
            let value = JSONReader.parse(Array(text.utf8))
            #expect(value == .number(0) || value == .array([.number(0)]), "\(text)")
            if let value { #expect(JSONReader.mayBeZeroWithExponent(value, Array(text.utf8))) }
        }
        #expect(
            JSONValue.decodedByFoundation(Array("0e1".utf8)) == nil, "JSONDecoder now reads 0e1: drop the exception")
    }

    @Test func onlyObjectsAreObjects() {
        #expect(JSONReader.object(Array("[1]".utf8)) == nil)
        #expect(JSONReader.object(Array("{}".utf8)) == [:])
        #expect(JSONReader.object(Array(#"{"t":1.5}"#.utf8)) == ["t": .number(1.5)])
    }

    /// Numbers on both sides of the quick conversion's limits round as `JSONDecoder` rounds them.
    @Test func numbersRoundAsJSONDecoderRoundsThem() {
        var random = SeededGenerator(seed: 17)
        for _ in 0..<5_000 {
            let digits = (0..<Int.random(in: 1...25, using: &random)).map { _ in
                String(Int.random(in: 0...9, using: &random))
            }.joined()
            let integer = digits.drop { $0 == "0" }
            var text = (Bool.random(using: &random) ? "-" : "") + (integer.isEmpty ? "0" : String(integer))
            if Bool.random(using: &random) {
                text +=
                    "."
                    + (0..<Int.random(in: 1...20, using: &random)).map { _ in
                        String(Int.random(in: 0...9, using: &random))
                    }.joined()
            }
            if Bool.random(using: &random) { text += "e\(Int.random(in: -330...310, using: &random))" }
            let bytes = Array(text.utf8)
            #expect(JSONValue.identical(JSONReader.parse(bytes), JSONValue.decodedByFoundation(bytes)), "\(text)")
        }
    }

    /// Mutated documents (bytes flipped, cut, repeated) are read alike or refused alike.
    @Test func garbageIsReadAsJSONDecoderReadsIt() {
        var random = SeededGenerator(seed: 23)
        let seeds = Self.cases.map { Array($0.0.utf8) }.filter { $0.count < 200 }
        for round in 0..<20_000 {
            var bytes = seeds[round % seeds.count]
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                guard !bytes.isEmpty else { break }
                let index = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes[index] = Array(#"{}[],:"\-+.eE0159 tfnu"#.utf8).randomElement(using: &random) ?? 0x20
                case 1: bytes[index] = UInt8.random(in: 1...255, using: &random)
                case 2: bytes.removeSubrange(index...)
                default: bytes.insert(contentsOf: bytes[index...].prefix(8), at: index)
                }
            }
            guard !bytes.contains(0), !bytes.starts(with: [0xFE, 0xFF]), !bytes.starts(with: [0xFF, 0xFE]) else {
                continue
            }
            let ours = JSONReader.parse(bytes)
            let reference = JSONValue.decodedByFoundation(bytes)
            if reference == nil, let ours, JSONReader.mayBeZeroWithExponent(ours, bytes) { continue }
            if ours == nil, reference != nil,
                JSONValue.identical(JSONReader.parse(bytes, skippingRepeatedValues: true), reference)
            {
                continue
            }
            #expect(JSONValue.identical(ours, reference), "\(String(decoding: bytes, as: UTF8.self).debugDescription)")
        }
    }
}
