/// A QR Code (ISO/IEC 18004, Model 2) for a short text, such as an `otpauth://` URI, drawn as SVG on
/// the server so that enrolment pages need no script. Byte mode, error correction level M, versions
/// 1 to 40, the mask with the lowest penalty. Written here because no library of the stack draws QR
/// codes; checked by decoding its output with an independent reader (zxing-cpp) in the tests.
struct QRCode: Sendable {
    /// Modules, row by row: true is dark.
    let modules: [[Bool]]
    let version: Int
    let mask: Int
    var size: Int { modules.count }

    /// Nil when the text does not fit in version 40 at level M (2,331 bytes).
    init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard let version = (1...40).first(where: { Self.dataCodewords(version: $0) * 8 >= 4 + Self.countBits(version: $0) + bytes.count * 8 }) else { return nil }
        var symbol = Symbol(version: version)
        symbol.drawFunctionPatterns()
        symbol.drawCodewords(Self.interleaved(Self.dataCodewords(bytes, version: version), version: version))
        var best: (mask: Int, penalty: Int, modules: [[Bool]])?
        for mask in 0..<8 {
            var candidate = symbol
            candidate.apply(mask: mask)
            candidate.drawFormatBits(mask: mask)
            let penalty = candidate.penalty()
            if best == nil || penalty < best!.penalty { best = (mask, penalty, candidate.modules) }
        }
        self.modules = best!.modules
        self.version = version
        self.mask = best!.mask
    }

    /// The code as SVG: one path of unit squares inside a four-module light margin, scaled by the
    /// viewer (`width`/`height` in CSS pixels).
    func svg(pixels: Int = 200) -> String {
        var path = ""
        for (y, row) in modules.enumerated() {
            for (x, dark) in row.enumerated() where dark { path += "M\(x + 4) \(y + 4)h1v1h-1z" }
        }
        let side = size + 8
        return
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(pixels)\" height=\"\(pixels)\" viewBox=\"0 0 \(side) \(side)\" shape-rendering=\"crispEdges\" role=\"img\">"
            + "<rect width=\"\(side)\" height=\"\(side)\" fill=\"#fff\"/><path fill=\"#000\" d=\"\(path)\"/></svg>"
    }

    // MARK: - Codewords

    /// Level M's error correction codewords per block, and its number of blocks, by version.
    static let eccPerBlock = [
        0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26, 26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
    ]
    static let blocks = [
        0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49,
    ]

    /// The bits of the character count in byte mode.
    static func countBits(version: Int) -> Int { version < 10 ? 8 : 16 }

    /// The modules left for codewords once the function patterns are drawn.
    static func rawModules(version: Int) -> Int {
        var result = (16 * version + 128) * version + 64
        if version >= 2 {
            let alignments = version / 7 + 2
            result -= (25 * alignments - 10) * alignments - 55
            if version >= 7 { result -= 36 }
        }
        return result
    }

    static func dataCodewords(version: Int) -> Int { rawModules(version: version) / 8 - eccPerBlock[version] * blocks[version] }

    /// Mode, count, bytes, terminator, then the pad codewords.
    static func dataCodewords(_ bytes: [UInt8], version: Int) -> [UInt8] {
        var bits: [Bool] = []
        func append(_ value: Int, _ count: Int) { for index in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> index) & 1 == 1) } }
        append(0b0100, 4)
        append(bytes.count, countBits(version: version))
        for byte in bytes { append(Int(byte), 8) }
        let capacity = dataCodewords(version: version) * 8
        append(0, min(4, capacity - bits.count))
        append(0, (8 - bits.count % 8) % 8)
        var result = stride(from: 0, to: bits.count, by: 8).map { start in bits[start..<start + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) } }
        var pad: UInt8 = 0xEC
        while result.count < capacity / 8 {
            result.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        return result
    }

    /// The data split into blocks, each with its Reed-Solomon codewords, interleaved.
    static func interleaved(_ data: [UInt8], version: Int) -> [UInt8] {
        let count = blocks[version]
        let ecc = eccPerBlock[version]
        let raw = rawModules(version: version) / 8
        let shortBlocks = count - raw % count
        let shortLength = raw / count
        let generator = ReedSolomon.generator(degree: ecc)
        var dataBlocks: [[UInt8]] = []
        var eccBlocks: [[UInt8]] = []
        var offset = 0
        for index in 0..<count {
            let length = shortLength - ecc + (index < shortBlocks ? 0 : 1)
            let block = Array(data[offset..<offset + length])
            offset += length
            dataBlocks.append(block)
            eccBlocks.append(ReedSolomon.remainder(block, generator: generator))
        }
        var result: [UInt8] = []
        for column in 0..<(shortLength - ecc + 1) {
            for block in dataBlocks where column < block.count { result.append(block[column]) }
        }
        for column in 0..<ecc {
            for block in eccBlocks { result.append(block[column]) }
        }
        return result
    }

    // MARK: - The symbol being drawn

    struct Symbol {
        let version: Int
        var modules: [[Bool]]
        var function: [[Bool]]
        var size: Int { modules.count }

        init(version: Int) {
            self.version = version
            let size = version * 4 + 17
            modules = Array(repeating: Array(repeating: false, count: size), count: size)
            function = modules
        }

        mutating func set(_ x: Int, _ y: Int, _ dark: Bool) {
            modules[y][x] = dark
            function[y][x] = true
        }

        mutating func drawFunctionPatterns() {
            for index in 0..<size {
                set(6, index, index % 2 == 0)
                set(index, 6, index % 2 == 0)
            }
            for (x, y) in [(3, 3), (size - 4, 3), (3, size - 4)] {
                for dy in -4...4 {
                    for dx in -4...4 where (0..<size).contains(x + dx) && (0..<size).contains(y + dy) {
                        let distance = max(abs(dx), abs(dy))
                        set(x + dx, y + dy, distance != 2 && distance != 4)
                    }
                }
            }
            let positions = alignmentPositions()
            for (i, x) in positions.enumerated() {
                for (j, y) in positions.enumerated() {
                    // Not over the three finder patterns.
                    if (i == 0 && j == 0) || (i == 0 && j == positions.count - 1) || (i == positions.count - 1 && j == 0) { continue }
                    for dy in -2...2 {
                        for dx in -2...2 { set(x + dx, y + dy, max(abs(dx), abs(dy)) != 1) }
                    }
                }
            }
            // Reserve the format areas (drawn per mask) and the dark module.
            drawFormatBits(mask: 0)
            drawVersionBits()
        }

        func alignmentPositions() -> [Int] {
            guard version > 1 else { return [] }
            let count = version / 7 + 2
            let step = version == 32 ? 26 : (version * 4 + count * 2 + 1) / (count * 2 - 2) * 2
            return [6] + (0..<(count - 1)).map { size - 7 - $0 * step }.reversed()
        }

        /// Level M (format bits 00) and the mask, BCH-protected and XORed with 101010000010010.
        mutating func drawFormatBits(mask: Int) {
            let data = mask
            var remainder = data
            for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
            let bits = (data << 10 | remainder) ^ 0x5412
            func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
            for index in 0...5 { set(8, index, bit(index)) }
            set(8, 7, bit(6))
            set(8, 8, bit(7))
            set(7, 8, bit(8))
            for index in 9..<15 { set(14 - index, 8, bit(index)) }
            for index in 0..<8 { set(size - 1 - index, 8, bit(index)) }
            for index in 8..<15 { set(8, size - 15 + index, bit(index)) }
            set(8, size - 8, true)
        }

        mutating func drawVersionBits() {
            guard version >= 7 else { return }
            var remainder = version
            for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
            let bits = version << 12 | remainder
            for index in 0..<18 {
                let dark = (bits >> index) & 1 == 1
                let (a, b) = (size - 11 + index % 3, index / 3)
                set(a, b, dark)
                set(b, a, dark)
            }
        }

        /// The zigzag placement, two columns at a time from the right, skipping the timing column.
        mutating func drawCodewords(_ codewords: [UInt8]) {
            var bit = 0
            var right = size - 1
            while right >= 1 {
                if right == 6 { right = 5 }
                for vertical in 0..<size {
                    for offset in 0..<2 {
                        let x = right - offset
                        let upward = (right + 1) & 2 == 0
                        let y = upward ? size - 1 - vertical : vertical
                        guard !function[y][x], bit < codewords.count * 8 else { continue }
                        modules[y][x] = (codewords[bit >> 3] >> (7 - (bit & 7))) & 1 == 1
                        bit += 1
                    }
                }
                right -= 2
            }
        }

        mutating func apply(mask: Int) {
            for y in 0..<size {
                for x in 0..<size where !function[y][x] {
                    let flip =
                        switch mask {
                        case 0: (x + y) % 2 == 0
                        case 1: y % 2 == 0
                        case 2: x % 3 == 0
                        case 3: (x + y) % 3 == 0
                        case 4: (x / 3 + y / 2) % 2 == 0
                        case 5: x * y % 2 + x * y % 3 == 0
                        case 6: (x * y % 2 + x * y % 3) % 2 == 0
                        default: ((x + y) % 2 + x * y % 3) % 2 == 0
                        }
                    if flip { modules[y][x].toggle() }
                }
            }
        }

        /// The standard's penalty: runs of five or more, 2x2 blocks, finder-like patterns, imbalance.
        func penalty() -> Int {
            var result = 0
            let lines = modules + (0..<size).map { x in modules.map { $0[x] } }
            for line in lines {
                var run = 1
                for index in 1..<line.count {
                    if line[index] == line[index - 1] {
                        run += 1
                        if run == 5 { result += 3 } else if run > 5 { result += 1 }
                    } else {
                        run = 1
                    }
                }
                var window = 0
                for (index, dark) in line.enumerated() {
                    window = ((window << 1) & 0x7FF) | (dark ? 1 : 0)
                    if index >= 10, window == 0x05D || window == 0x5D0 { result += 40 }
                }
            }
            for y in 0..<(size - 1) {
                for x in 0..<(size - 1) where modules[y][x] == modules[y][x + 1] && modules[y][x] == modules[y + 1][x] && modules[y][x] == modules[y + 1][x + 1] {
                    result += 3
                }
            }
            let dark = modules.reduce(0) { $0 + $1.filter { $0 }.count }
            let total = size * size
            result += ((abs(dark * 20 - total * 10) + total - 1) / total - 1) * 10
            return result
        }
    }
}

/// Reed-Solomon error correction over GF(2^8) with the QR polynomial x^8 + x^4 + x^3 + x^2 + 1.
enum ReedSolomon {
    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        var result: UInt16 = 0
        var a = UInt16(a)
        var b = b
        while b != 0 {
            if b & 1 == 1 { result ^= a }
            a <<= 1
            if a & 0x100 != 0 { a ^= 0x11D }
            b >>= 1
        }
        return UInt8(result)
    }

    /// The generator's coefficients, highest power first (without the leading 1): the product of
    /// (x - a^i) for i below `degree`.
    static func generator(degree: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: degree)
        result[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for index in 0..<degree {
                result[index] = multiply(result[index], root)
                if index + 1 < degree { result[index] ^= result[index + 1] }
            }
            root = multiply(root, 0x02)
        }
        return result
    }

    /// The error correction codewords of `data`: its remainder modulo the generator.
    static func remainder(_ data: [UInt8], generator: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: generator.count)
        for byte in data {
            let factor = byte ^ result.removeFirst()
            result.append(0)
            for index in result.indices { result[index] ^= multiply(generator[index], factor) }
        }
        return result
    }
}
