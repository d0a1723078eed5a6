import QuireHTTP
import Testing

@Suite struct URLRedactionTests {
    @Test(arguments: [
        (
            "https://api.nytimes.com/svc/search/v2/articlesearch.json?q=x&api-key=SECRET&page=2",
            "https://api.nytimes.com/svc/search/v2/articlesearch.json?q=x&api-key=REDACTED&page=2"
        ),
        ("http://h/p?API-KEY=SECRET", "http://h/p?API-KEY=REDACTED"),
        ("http://h/p?apikey=SECRET#frag", "http://h/p?apikey=REDACTED#frag"),
        (
            "http://h/p?key=SECRET&token=T0&access_token=A1",
            "http://h/p?key=REDACTED&token=REDACTED&access_token=REDACTED"
        ),
        ("http://h/p?api%2Dkey=SECRET", "http://h/p?api%2Dkey=REDACTED"),
        ("http://user:SECRET@h/p?q=1", "http://REDACTED@h/p?q=1"),
        ("http://h/p?monkey=banana&keys=1", "http://h/p?monkey=banana&keys=1"),
        ("http://h/p", "http://h/p"),
        ("failed to fetch http://h/p?api-key=SECRET now", "failed to fetch http://h/p?api-key=REDACTED now"),
    ])
    func secretsAreReplaced(input: String, expected: String) {
        let redacted = URLRedaction.redact(input)
        #expect(redacted == expected)
        #expect(!redacted.contains("SECRET"))
    }

    @Test func errorsRedactWhatTheyAreGiven() {
        let error = HTTPError(
            code: .timeout, message: "while reading https://h/x?api-key=SECRET", url: "https://h/x?api-key=SECRET")
        #expect(!error.description.contains("SECRET"))
        #expect(error.url == "https://h/x?api-key=REDACTED")
    }
}
