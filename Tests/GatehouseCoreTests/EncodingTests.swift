import Foundation
@testable import GatehouseCore
import Testing

/// The hand-written base64url codec on the token paths agrees with Foundation's base64 on every
/// length, and refuses what no encoder writes.
extension GatehouseCoreTests {
    static func foundationBase64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    @Test func base64URLMatchesFoundationAndRoundTripsEveryLength() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let data = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let encoded = Base64URL.encode(data)
            #expect(encoded == Self.foundationBase64URL(data))
            #expect(Base64URL.decode(encoded) == data)
        }
        // Every byte value, so each character of the alphabet appears.
        let all = Data(0...255)
        #expect(Base64URL.encode(all) == Self.foundationBase64URL(all))
        #expect(Base64URL.decode(Base64URL.encode(all)) == all)
    }

    @Test func base64URLDecodingRefusesWhatNoEncoderWrites() {
        #expect(Base64URL.decode("A") == nil)  // one character left over: not a whole byte
        #expect(Base64URL.decode("AB.C") == nil)
        #expect(Base64URL.decode("AB C") == nil)
        #expect(Base64URL.decode("YQ===") == nil)
        #expect(Base64URL.decode("é") == nil)
        #expect(Base64URL.decode("YR") == nil)  // non-zero bits past the last byte: "YQ" is the encoding
        #expect(Base64URL.decode("YWI") == Data("ab".utf8))
        #expect(Base64URL.decode("YWJ") == nil)
        #expect(Base64URL.decode("YWJj=") == nil)  // padding that completes no group
        #expect(Base64URL.decode("YQ=") == nil)
        // What the Foundation-based decoder accepted stays accepted: padding, standard base64's characters.
        #expect(Base64URL.decode("YQ==") == Data("a".utf8))
        #expect(Base64URL.decode("+/8") == Data([0xFB, 0xFF]))
        #expect(Base64URL.decode("-_8") == Data([0xFB, 0xFF]))
        #expect(Base64URL.decode("") == Data())
    }
}
