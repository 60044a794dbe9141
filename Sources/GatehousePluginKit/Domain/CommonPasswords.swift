/// The built-in deny-list: the most common passwords and PINs from public breach corpora. Apps add
/// their own values through `PasswordPolicy.denyList`.
package enum CommonPasswords {
    package static func contains(_ loweredSecret: String) -> Bool { values.contains(loweredSecret) }

    static let values: Set<String> = [
        "123456", "123456789", "12345678", "password", "qwerty", "qwerty123", "1q2w3e4r", "12345",
        "111111", "1234567890", "1234567", "123123", "000000", "iloveyou", "abc123", "password1",
        "password123", "passw0rd", "p@ssw0rd", "p@ssword", "admin", "admin123", "administrator",
        "welcome", "welcome1", "welcome123", "letmein", "monkey", "dragon", "football", "baseball",
        "sunshine", "princess", "master", "shadow", "superman", "trustno1", "whatever", "qwertyuiop",
        "asdfghjkl", "zxcvbnm", "1qaz2wsx", "qazwsx", "654321", "666666", "121212", "7777777",
        "888888", "999999", "112233", "123321", "159753", "987654321", "secret", "changeme",
        "changeit", "default", "login", "starwars", "michael", "jennifer", "jordan23", "hunter2",
        "iloveyou1", "charlie", "donald", "computer", "internet", "freedom", "summer", "winter",
        "spring", "autumn", "chelsea", "liverpool", "arsenal", "pokemon", "mustang", "batman",
        "access", "flower", "cheese", "killer", "soccer", "hockey", "ranger", "buster", "thomas",
        "robert", "daniel", "hannah", "jessica", "ashley", "bailey", "passpass", "testtest",
        "test1234", "gatehouse", "1234", "0000", "1111", "2222", "5555", "6969", "1212", "7777",
        "1004", "2000", "4444", "3333", "2580", "8888", "9999", "0852", "1122", "1313",
    ]
}
