import Foundation
import GatehouseCore

/// What an app shows a person for a challenge of the JSON flow API, in the flow's language: the
/// declared title, prompt (its `{field}`s filled), main button, each answer field's label and each
/// extra button's label — the same texts the browser page shows.
struct ChallengeTexts {
    var title: String
    var prompt: String?
    var submit: String
    var labels: [String: String]
    var actions: [String: String]

    init(_ description: ChallengeDescription, for challenge: Challenge, language: String, catalog: MessageCatalog) {
        let say = { (text: String) in catalog.text(text, in: language) }
        title = say(description.title)
        prompt = PageRenderer.prompt(of: description, for: challenge, language: language, catalog: catalog)
        submit = say(description.submitLabel)
        labels = Dictionary(description.inputs.filter { $0.kind != .hidden }.map { ($0.name, say($0.label)) }) { first, _ in first }
        actions = Dictionary(description.actions.map { ($0.name, say($0.label)) }) { first, _ in first }
    }

    var json: JSONValue {
        var object: [String: JSONValue] = [
            "title": .string(title), "submit": .string(submit), "labels": .object(labels.mapValues(JSONValue.string)),
            "actions": .object(actions.mapValues(JSONValue.string)),
        ]
        if let prompt { object["prompt"] = .string(prompt) }
        return .object(object)
    }
}
