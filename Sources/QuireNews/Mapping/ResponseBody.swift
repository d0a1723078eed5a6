/// Recognising what a response body is before mapping it: HTML, an API error object, or data.
enum ResponseBody {
    /// Parses a page of documents, first turning an HTML/XML page into
    /// ``NewsMappingError/Kind/html``, and setting aside values that nest too deeply and strings
    /// whose text is not valid, so that the document holding one is rejected alone (see
    /// ``SetAsideValues``).
    static func parseSettingAsideBadValues(_ body: [UInt8]) throws(NewsMappingError) -> (JSONValue, SetAsideValues) {
        let parsed = try JSONParser.parseSettingAsideBadValues(jsonBytes(of: body))
        return (parsed.value, SetAsideValues(values: parsed.setAside))
    }

    /// The body with a UTF-8 byte order mark blanked (it is harmless); throws for an empty body
    /// or an HTML/XML page.
    private static func jsonBytes(of body: [UInt8]) throws(NewsMappingError) -> [UInt8] {
        var index = 0
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        while index < body.count, body[index] == 0x20 || body[index] == 0x0A || body[index] == 0x0D || body[index] == 0x09 {
            index += 1
        }
        if index == body.count { throw NewsMappingError(.emptyBody) }
        if body[index] == UInt8(ascii: "<") { throw NewsMappingError(.html) }
        guard body.starts(with: [0xEF, 0xBB, 0xBF]) else { return body }
        // Blank the mark rather than slicing it off, so byte ranges stay those of `body`.
        var copy = body
        copy.replaceSubrange(0..<3, with: [0x20, 0x20, 0x20])
        return copy
    }

    /// A page's values set aside (nesting too deeply, bad text): the documents holding them are
    /// rejected, and one outside every document fails the page.
    struct SetAsideValues {
        let values: [SetAsideJSONValue]

        /// The error for the document at `location` (`response.docs[3]`), if it holds a value
        /// set aside: located at the document's member that holds it (`response.docs[3].related`),
        /// not hundreds of steps further in.
        func error(inDocumentAt location: [JSONPathComponent]) -> NewsMappingError? {
            guard let value = values.first(where: { $0.path.starts(with: location) }) else { return nil }
            return NewsMappingError(value.kind, at: Array(value.path.prefix(location.count + 1)))
        }

        /// Throws unless every value set aside lies in an element of the array at `documents`
        /// (`response.docs`).
        func requireInside(_ documents: [JSONPathComponent]) throws(NewsMappingError) {
            for value in values {
                guard value.path.starts(with: documents), value.path.count > documents.count else { throw value.error }
            }
        }
    }

    /// Throws for the error bodies the APIs send: a gateway `fault` object (401/429), an
    /// `"status": "ERROR"` object with `errors` (400), a Spring Boot error object (500), or a
    /// Feedzilla-style `error` object.
    static func rejectErrorShapes(_ root: JSONObject) throws(NewsMappingError) {
        let m = JSONMapper(object: root)
        if let fault = root["fault"], fault != .null {
            let message = (try? m(.string("fault.faultstring"))) ?? nil
            let code = (try? m(.string("fault.detail.errorcode"))) ?? nil
            throw NewsMappingError(.apiFault(message: message ?? "unknown fault", code: code))
        }
        let status = root["status"]
        // An empty `errors` beside a success is no error (a page with `"errors": []` was refused).
        let errorsGiven: Bool
        switch root["errors"] {
        case nil, .null?: errorsGiven = false
        case .array(let errors)?: errorsGiven = !errors.isEmpty || status != .string("OK")
        default: errorsGiven = true
        }
        if status == .string("ERROR") || errorsGiven {
            var messages: [String] = []
            if case .array(let errors)? = root["errors"] {
                for case .string(let text) in errors { messages.append(text) }
            }
            throw NewsMappingError(.apiError(messages: messages))
        }
        if case .int(let code)? = status, code >= 400 {
            let parts = [(try? m(.string("error"))) ?? nil, (try? m(.string("message"))) ?? nil].compactMap { $0 }
            throw NewsMappingError(.apiError(messages: parts.isEmpty ? ["HTTP \(code)"] : parts))
        }
        if let error = root["error"], error != .null, root["response"] == nil {
            switch error {
            case .string(let text):
                throw NewsMappingError(.apiError(messages: [text]))
            case .object:
                let text = (try? m(.optional(["error.statusdescription", "error.message"], .lenientString))) ?? nil
                throw NewsMappingError(.apiError(messages: [text ?? "error"]))
            default:
                break
            }
        }
    }
}
