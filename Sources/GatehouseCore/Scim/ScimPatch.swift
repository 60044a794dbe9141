import Foundation

/// A SCIM PATCH request (RFC 7644 section 3.5.2) and how it changes a resource's attributes:
/// `add`, `replace` and `remove` with a path (`name.givenName`, `emails[type eq "work"].value`,
/// `urn:...:enterprise:2.0:User:manager`) or, for add and replace, without one. What Entra ID and
/// Okta send is understood too: capitalised ops (`Replace`), a path-less `{"active": false}`, and
/// `remove` of `members` with the members to remove as its value.
public struct ScimPatch: Sendable {
    public enum Op: String, Sendable { case add, replace, remove }

    public struct Operation: Sendable {
        public var op: Op
        public var path: String?
        public var value: JSONValue?
    }

    public var operations: [Operation]

    static let schema = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
    /// More operations than this in one request are refused.
    static let maxOperations = 1000

    /// Reads a PatchOp body.
    public init(_ body: JSONValue) throws(ScimError) {
        guard case .object(let fields) = body else { throw .invalidSyntax("A PATCH body is a PatchOp object.") }
        if case .array(let schemas) = ScimPath.value(fields, "schemas") {
            guard schemas.contains(where: { $0.stringValue?.lowercased() == Self.schema.lowercased() }) else {
                throw .invalidSyntax("A PATCH body's schemas must name \(Self.schema).")
            }
        }
        guard case .array(let items) = ScimPath.value(fields, "Operations"), !items.isEmpty else {
            throw .invalidSyntax("A PATCH body needs a non-empty Operations array.")
        }
        guard items.count <= Self.maxOperations else { throw .invalidSyntax("More than \(Self.maxOperations) operations in one PATCH.") }
        var operations: [Operation] = []
        for item in items {
            guard case .object(let operation) = item, let opText = ScimPath.value(operation, "op")?.stringValue, let op = Op(rawValue: opText.lowercased())
            else { throw .invalidSyntax("Each operation needs an op: add, replace or remove.") }
            let path = ScimPath.value(operation, "path")?.stringValue
            let value = ScimPath.value(operation, "value")
            if op != .remove, value == nil { throw .invalidSyntax("An \(op.rawValue) operation needs a value.") }
            if op == .remove, path == nil || path?.isEmpty == true { throw .noTarget("A remove operation needs a path.") }
            operations.append(Operation(op: op, path: path?.isEmpty == true ? nil : path, value: value))
        }
        self.operations = operations
    }

    /// The attributes after every operation, in order. `readOnly` names attributes no operation may
    /// change (refused as `mutability`).
    public func applied(to attributes: [String: JSONValue], readOnly: Set<String>) throws(ScimError) -> [String: JSONValue] {
        var result = attributes
        for operation in operations {
            if let path = operation.path {
                try Self.apply(operation.op, path: path, value: operation.value, to: &result, readOnly: readOnly)
            } else {
                // No path: the value's keys are paths (usually plain attribute names).
                guard case .object(let changes) = operation.value else { throw .invalidValue("An \(operation.op.rawValue) without a path needs an object value.") }
                // Read-only attributes in a value are ignored (RFC 7644 section 3.5.2: Okta renames a
                // group with its `id` in the value).
                for (key, value) in changes.sorted(by: { $0.key < $1.key }) where !readOnly.contains(key.lowercased()) {
                    try Self.apply(operation.op, path: key, value: value, to: &result, readOnly: readOnly)
                }
            }
        }
        return result
    }

    // MARK: - One operation

    static func apply(_ op: Op, path text: String, value: JSONValue?, to resource: inout [String: JSONValue], readOnly: Set<String>) throws(ScimError) {
        // `attr[filter]` and `attr[filter].sub`.
        var filter: ScimFilter?
        var pathText = text
        if let open = text.firstIndex(of: "["), let close = text.lastIndex(of: "]"), open < close {
            filter = try parseFilter(String(text[text.index(after: open)..<close]))
            let after = text[text.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(".") else { throw .invalidPath("'\(text)' is not an attribute path.") }
            pathText = String(text[..<open]) + after
        }
        let path = try ScimPath.parse(pathText)
        if readOnly.contains(path.attribute.lowercased()), path.schema == nil {
            throw .mutability("'\(path.attribute)' cannot be changed.")
        }
        try withContainer(path, in: &resource, creating: op != .remove) { (container: inout [String: JSONValue]) throws(ScimError) in
            let key = ScimPath.existingKey(container, path.attribute)
            if let filter {
                try applyFiltered(op, key: key, filter: filter, sub: path.subAttribute, value: value, in: &container)
            } else if let sub = path.subAttribute {
                try applySub(op, key: key, sub: sub, value: value, in: &container)
            } else {
                try applyWhole(op, key: key, value: value, in: &container)
            }
        }
    }

    static func parseFilter(_ text: String) throws(ScimError) -> ScimFilter {
        do {
            return try ScimFilter.parse(text)
        } catch {
            throw .invalidPath(error.detail)
        }
    }

    /// Runs `body` on the object the path's attribute lives in (an extension's object, made when
    /// adding to one the resource does not have yet).
    static func withContainer(
        _ path: ScimPath, in resource: inout [String: JSONValue], creating: Bool, _ body: (inout [String: JSONValue]) throws(ScimError) -> Void
    ) throws(ScimError) {
        guard let schema = path.schema else { return try body(&resource) }
        let key = ScimPath.existingKey(resource, schema)
        var object: [String: JSONValue]
        if case .object(let existing) = resource[key] {
            object = existing
        } else {
            guard creating else { return }
            object = [:]
        }
        try body(&object)
        resource[key] = object.isEmpty ? nil : .object(object)
    }

    static func applyWhole(_ op: Op, key: String, value: JSONValue?, in container: inout [String: JSONValue]) throws(ScimError) {
        switch op {
        case .remove:
            // Entra ID removes members by naming them as the value of a remove of `members`.
            if case .array(let removals) = value, case .array(let existing) = container[key] {
                let remaining = existing.filter { element in !removals.contains { sameElement($0, element) } }
                container[key] = remaining.isEmpty ? nil : .array(remaining)
            } else {
                container[key] = nil
            }
        case .replace:
            container[key] = value
        case .add:
            guard let value else { return }
            switch (container[key], value) {
            case (.array(let existing), .array(let added)):
                container[key] = .array(existing + added.filter { item in !existing.contains { sameElement($0, item) } })
            case (.array(let existing), _):
                container[key] = .array(existing.contains { sameElement($0, value) } ? existing : existing + [value])
            case (.object(let existing), .object(let added)):
                container[key] = .object(existing.merging(added) { _, new in new })
            default:
                container[key] = value
            }
        }
    }

    static func applySub(_ op: Op, key: String, sub: String, value: JSONValue?, in container: inout [String: JSONValue]) throws(ScimError) {
        switch container[key] {
        case .array(let elements):
            // Every element of a multi-valued attribute.
            container[key] = .array(
                elements.map { element in
                    guard case .object(var fields) = element else { return element }
                    set(&fields, sub, op == .remove ? nil : value)
                    return .object(fields)
                })
        case .object(var fields):
            set(&fields, sub, op == .remove ? nil : value)
            container[key] = fields.isEmpty ? nil : .object(fields)
        default:
            guard op != .remove else { return }
            var fields: [String: JSONValue] = [:]
            set(&fields, sub, value)
            container[key] = .object(fields)
        }
    }

    static func applyFiltered(_ op: Op, key: String, filter: ScimFilter, sub: String?, value: JSONValue?, in container: inout [String: JSONValue]) throws(ScimError) {
        var elements: [JSONValue] = []
        if case .array(let existing) = container[key] { elements = existing }
        let matching = elements.indices.filter { index in
            if case .object(let fields) = elements[index] { return filter.matches(fields) }
            return false
        }
        switch op {
        case .remove:
            if let sub {
                for index in matching {
                    guard case .object(var fields) = elements[index] else { continue }
                    set(&fields, sub, nil)
                    elements[index] = .object(fields)
                }
            } else {
                elements = elements.indices.filter { !matching.contains($0) }.map { elements[$0] }
            }
        case .add, .replace:
            guard let value else { return }
            if matching.isEmpty {
                // Entra ID adds `emails[type eq "work"].value` to a user that has no work address: the
                // element is made from the filter's equalities.
                guard var made = equalities(filter) else { throw .noTarget("No value of '\(key)' matches the filter.") }
                if let sub { set(&made, sub, value) } else if case .object(let fields) = value { made.merge(fields) { _, new in new } }
                elements.append(.object(made))
            }
            for index in matching {
                if let sub {
                    guard case .object(var fields) = elements[index] else { continue }
                    set(&fields, sub, value)
                    elements[index] = .object(fields)
                } else if case .object(let fields) = value, case .object(let existing) = elements[index] {
                    elements[index] = .object(op == .add ? existing.merging(fields) { _, new in new } : fields)
                } else {
                    elements[index] = value
                }
            }
        }
        container[key] = elements.isEmpty ? nil : .array(elements)
    }

    /// `type eq "work" and primary eq true` as the object those equalities describe; nil for any other filter.
    static func equalities(_ filter: ScimFilter) -> [String: JSONValue]? {
        switch filter {
        case .compare(let path, .eq, let value) where path.schema == nil && path.subAttribute == nil: [path.attribute: value]
        case .and(let left, let right):
            equalities(left).flatMap { first in equalities(right).map { first.merging($0) { _, new in new } } }
        default: nil
        }
    }

    static func set(_ fields: inout [String: JSONValue], _ key: String, _ value: JSONValue?) {
        fields[ScimPath.existingKey(fields, key)] = value
    }

    /// Two elements of a multi-valued attribute are the same when their `value`s are (or they are equal).
    static func sameElement(_ a: JSONValue, _ b: JSONValue) -> Bool {
        if case .object(let left) = a, case .object(let right) = b, let x = ScimPath.value(left, "value"), let y = ScimPath.value(right, "value") {
            return x == y
        }
        return a == b
    }
}
