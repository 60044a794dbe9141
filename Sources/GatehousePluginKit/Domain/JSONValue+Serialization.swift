import Foundation

extension JSONValue {
    /// Compact JSON text of the value, object keys sorted. A direct writer: the token endpoints answer
    /// with small objects thousands of times a second, and `JSONEncoder` dominated their profile.
    public func serialized() -> [UInt8] {
        var output = [UInt8]()
        output.reserveCapacity(256)
        write(into: &output)
        return output
    }

    private func write(into output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let value):
            if !value.isFinite {
                output.append(contentsOf: "null".utf8)
            } else if value.rounded() == value, abs(value) < 1e15 {
                output.append(contentsOf: String(Int64(value)).utf8)
            } else {
                output.append(contentsOf: "\(value)".utf8)
            }
        case .string(let value): Self.writeString(value, into: &output)
        case .array(let values):
            output.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                value.write(into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.writeString(key, into: &output)
                output.append(UInt8(ascii: ":"))
                members[key]!.write(into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ text: String, into output: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                output.append(contentsOf: "\\u00".utf8)
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0f)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
