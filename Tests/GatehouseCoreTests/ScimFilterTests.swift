import Foundation
import GatehouseCore
import Testing

/// SCIM filters and PATCH operations (RFC 7644 sections 3.4.2.2 and 3.5.2), on plain resources.
extension GatehouseCoreTests {
    static let scimUser: [String: JSONValue] = [
        "id": "2819c223", "userName": "Bjensen", "externalId": "Ext-1", "active": true, "title": "Tour Guide",
        "name": ["givenName": "Barbara", "familyName": "Jensen"],
        "emails": [["value": "bjensen@example.com", "type": "work", "primary": true], ["value": "babs@jensen.org", "type": "home"]],
        "meta": ["resourceType": "User", "lastModified": "2011-05-13T04:42:34Z"],
        "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": ["employeeNumber": "701984"],
    ]

    @Test(arguments: [
        (#"userName eq "bjensen""#, true), (#"USERNAME Eq "BJENSEN""#, true), (#"name.familyName co "ens""#, true), (#"userName sw "J""#, false),
        (#"title pr"#, true), (#"nickName pr"#, false), (#"meta.lastModified gt "2011-05-13T04:42:34Z""#, false),
        (#"meta.lastModified ge "2011-05-13T04:42:34Z""#, true), (#"title pr and userType eq "Employee""#, false),
        (#"title pr or userType eq "Intern""#, true), (#"userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")"#, false),
        (#"emails[type eq "work" and value co "@example.com"]"#, true), (#"emails[type eq "home" and value co "@example.com"]"#, false),
        (#"not (userName eq "bjensen")"#, false), (#"externalId eq "ext-1""#, false), (#"externalId eq "Ext-1""#, true), (#"active eq true"#, true),
        (#"urn:ietf:params:scim:schemas:core:2.0:User:userName eq "bjensen""#, true),
        (#"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber eq "701984""#, true),
        (#"userName eq "a" or userName eq "b" and userName eq "c" or active eq true"#, true),
    ])
    func scimFiltersMatchAsRFC7644Says(filter: String, expected: Bool) throws {
        #expect(try ScimFilter.parse(filter).matches(Self.scimUser) == expected, "\(filter)")
    }

    @Test(arguments: [
        #"userName eq"#, #"userName xx "a""#, #"(userName eq "a""#, #"userName eq "a" and"#, #"emails[type eq "work""#, #"not userName eq "a""#,
        #"userName eq "unterminated"#, #"1abc eq "a""#, #"userName eq bare"#,
    ])
    func scimFiltersThatAreMalformedAreInvalidFilters(filter: String) {
        #expect(throws: ScimError.self) { try ScimFilter.parse(filter) }
        do { _ = try ScimFilter.parse(filter) } catch { #expect(error.scimType == "invalidFilter") }
    }

    @Test func deeplyNestedFiltersAreRefusedNotRecursedInto() {
        let deep = String(repeating: "(", count: 200) + #"userName eq "a""# + String(repeating: ")", count: 200)
        #expect(throws: ScimError.self) { try ScimFilter.parse(deep) }
        #expect(throws: ScimError.self) { try ScimFilter.parse(String(repeating: "a", count: 5000)) }
    }

    @Test func scimPatchesChangeWhatTheirPathsName() throws {
        func patch(_ operations: String) throws(ScimError) -> [String: JSONValue] {
            let body = try! JSONDecoder().decode(
                JSONValue.self, from: Data(#"{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":\#(operations)}"#.utf8))
            return try ScimPatch(body).applied(to: Self.scimUser, readOnly: ["id", "meta", "groups"])
        }
        #expect(
            try patch(#"[{"op":"replace","path":"emails[type eq \"work\"].value","value":"b@new.example"}]"#)["emails"]?.arrayValue?.first?.objectValue?["value"]
                == "b@new.example")
        #expect(try patch(#"[{"op":"remove","path":"emails[type eq \"home\"]"}]"#)["emails"]?.arrayValue?.count == 1)
        #expect(try patch(#"[{"op":"remove","path":"title"}]"#)["title"] == nil)
        #expect(try patch(#"[{"op":"add","value":{"nickName":"Babs","name.middleName":"Q"}}]"#)["name"]?.objectValue?["middleName"] == "Q")
        #expect(try patch(#"[{"op":"add","path":"emails","value":[{"value":"third@example.com","type":"other"}]}]"#)["emails"]?.arrayValue?.count == 3)
        #expect(try patch(#"[{"op":"add","path":"emails","value":[{"value":"bjensen@example.com"}]}]"#)["emails"]?.arrayValue?.count == 2, "no duplicate")
        #expect(
            try patch(#"[{"op":"replace","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager","value":{"value":"m-1"}}]"#)[
                "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"]?.objectValue?["manager"] == ["value": "m-1"])
        #expect(try patch(#"[{"op":"Replace","path":"active","value":"False"}]"#)["active"] == "False", "normalised later, with the user's checks")
        for refused in [#"[{"op":"replace","path":"id","value":"x"}]"#, #"[{"op":"replace","path":"meta.created","value":"x"}]"#] {
            #expect(throws: ScimError.self) { try patch(refused) }
        }
        do { _ = try patch(#"[{"op":"remove"}]"#) } catch { #expect(error.scimType == "noTarget") }
        do { _ = try patch(#"[{"op":"replace","path":"emails[type eq \"fax\" or type eq \"x\"].value","value":"x"}]"#) } catch { #expect(error.scimType == "noTarget") }
        do { _ = try patch(#"[{"op":"move","path":"title"}]"#) } catch { #expect(error.scimType == "invalidSyntax") }
        do { _ = try patch(#"[{"op":"replace","path":"emails[type eq","value":"x"}]"#) } catch { #expect(error.scimType == "invalidPath") }
    }
}
