import Foundation
@testable import GatehouseStore
import Testing

/// The stores' quick reader of string lists agrees with `JSONDecoder` on everything it accepts and
/// hands everything else to it.
extension GatehouseStoreTests {
    @Test(arguments: [
        "[]", " [ ] ", "[\"openid\"]", "[\"openid\",\"profile\",\"email\"]", "[ \"a\" , \"b\" ]", "[\"\"]", "[\"é😀 ü\"]",
        "[\"a\\\"b\"]", "[\"tab\\there\"]", "[\"\\u00e9\"]", "[\"a\\/b\"]",
    ])
    func stringListsReadAsJSONDecoderReadsThem(text: String) throws {
        let expected = try JSONDecoder().decode([String].self, from: Data(text.utf8))
        #expect(try StoreJSON.decode([String].self, text) == expected)
        // Escapes are left to the full decoder.
        if text.contains("\\") { #expect(StoreJSON.plainStringList(text) == nil) } else { #expect(StoreJSON.plainStringList(text) == expected) }
    }

    @Test(arguments: ["", "[", "]", "[\"a\"", "[\"a\" \"b\"]", "[a]", "[\"a\"] x", "[\"a\u{01}\"]", "{\"a\":1}", "[1]", "null"])
    func malformedStringListsAreRefused(text: String) {
        #expect(StoreJSON.plainStringList(text) == nil)
        #expect(throws: (any Error).self) { try StoreJSON.decode([String].self, text) }
    }

    @Test func stringListsWrittenQuicklyReadBackTheSame() throws {
        let lists: [[String]] = [[], ["openid", "profile"], ["quote \" slash / back \\ tab \t nul \u{0}", "é😀"]]
        for list in lists {
            let text = try StoreJSON.encode(list)
            #expect(try JSONDecoder().decode([String].self, from: Data(text.utf8)) == list, "\(text)")
            #expect(try StoreJSON.decode([String].self, text) == list)
        }
    }
}
