// SchemaValidator.swift — a small JSON Schema (draft 2020-12) validator for the report schema, so every
// report the tests see is checked against schema/crashwatch-report-v1.schema.json without outside packages.
// It implements exactly the keywords that schema uses and reports any other keyword as an error, so the
// schema cannot silently rely on something the validator ignores.
import CrashwatchTestSupport
import Foundation

/// A parsed JSON value; integers are kept apart from other numbers so `"type": "integer"` can be checked.
enum JSONValue: Codable, Equatable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number without a fraction that fits in an `Int64`.
    case integer(Int64)
    /// Any other number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object (key order is not kept: JSON Schema does not depend on it).
    case object([String: JSONValue])

    /// Parses one JSON document.
    init(json data: Data) throws { self = try JSONDecoder().decode(JSONValue.self, from: data) }

    /// Decodes whichever JSON type is present: booleans never as numbers, whole numbers as `integer`.
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value back to JSON (used to build deliberately broken reports).
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The value as JSON text.
    func data() throws -> Data { try JSONEncoder().encode(self) }

    /// The JSON Schema type name of the value (`integer` for whole numbers).
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .number(let value): value.rounded() == value ? "integer" : "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The numeric value, for numbers of either kind.
    var numericValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .number(let value): value
        default: nil
        }
    }

    /// JSON equality as JSON Schema defines it: `1` equals `1.0`, objects compare without key order.
    func jsonEquals(_ other: JSONValue) -> Bool {
        if let lhs = numericValue, let rhs = other.numericValue { return lhs == rhs }
        switch (self, other) {
        case (.array(let lhs), .array(let rhs)):
            return lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { $0.jsonEquals($1) }
        case (.object(let lhs), .object(let rhs)):
            return lhs.count == rhs.count && lhs.allSatisfy { key, value in rhs[key].map(value.jsonEquals) ?? false }
        default:
            return self == other
        }
    }

    /// Reads or replaces the member at a dotted path (`threads.0.frames.1.address`); reading a missing one gives nil.
    subscript(path path: String) -> JSONValue? {
        get {
            var current: JSONValue? = self
            for component in path.split(separator: ".") { current = current?.member(String(component)) }
            return current
        }
        set {
            let components = path.split(separator: ".").map(String.init)
            update(components[...], newValue)
        }
    }

    /// The member named by one path component: an object key, or an array index in decimal.
    private func member(_ component: String) -> JSONValue? {
        switch self {
        case .object(let members): return members[component]
        case .array(let items): return Int(component).flatMap { items.indices.contains($0) ? items[$0] : nil }
        default: return nil
        }
    }

    /// Sets (or, with nil, removes) the member at a path of components.
    private mutating func update(_ components: ArraySlice<String>, _ newValue: JSONValue?) {
        guard let first = components.first else {
            if let newValue { self = newValue }
            return
        }
        switch self {
        case .object(var members):
            if components.count == 1 {
                members[first] = newValue
            } else if var child = members[first] {
                child.update(components.dropFirst(), newValue)
                members[first] = child
            }
            self = .object(members)
        case .array(var items):
            guard let index = Int(first), items.indices.contains(index) else { return }
            if components.count == 1 {
                if let newValue { items[index] = newValue } else { items.remove(at: index) }
            } else {
                items[index].update(components.dropFirst(), newValue)
            }
            self = .array(items)
        default:
            return
        }
    }
}

/// Validates JSON documents against the report schema (draft 2020-12, the subset the schema uses).
///
/// Supported keywords: `type` (a name or a list, including `null` and `integer`), `properties`, `required`,
/// `additionalProperties` (`false` or a schema), `items`, `enum`, `const`, `pattern` (Swift `Regex`, unanchored
/// as in JSON Schema), `minimum` and `$ref` to `#/...` JSON pointers. `$schema`, `$id`, `$defs`, `title`,
/// `description` and `$comment` are annotations. Any other keyword is an error. As the specification says,
/// `pattern` applies only to strings, `minimum` only to numbers, the object keywords only to objects.
struct SchemaValidator {
    /// The schema document, whose `$defs` the `$ref`s point into.
    let schema: JSONValue

    /// Where the report schema lives in the package.
    static let reportSchemaPath = "\(Paths.root)/schema/crashwatch-report-v1.schema.json"

    /// Loads a schema file, by default the report schema.
    init(schemaPath: String = SchemaValidator.reportSchemaPath) throws {
        schema = try JSONValue(json: try Data(contentsOf: URL(fileURLWithPath: schemaPath)))
    }

    /// Validates a report's JSON text; returns one `path: problem` line per violation, empty when valid.
    func validate(reportJSON: Data) -> [String] {
        do {
            return validate(try JSONValue(json: reportJSON))
        } catch {
            return ["$: not JSON: \(error)"]
        }
    }

    /// Validates a parsed JSON value; returns one `path: problem` line per violation, empty when valid.
    func validate(_ instance: JSONValue) -> [String] {
        var errors: [String] = []
        check(instance, against: schema, at: "$", schemaPath: "#", errors: &errors, depth: 0)
        return errors
    }

    /// Keywords that carry no constraint.
    private static let annotations: Set<String> = ["$schema", "$id", "$defs", "title", "description", "$comment"]

    /// Applies one schema to one instance, appending violations.
    private func check(_ instance: JSONValue, against schema: JSONValue, at path: String, schemaPath: String,
                       errors: inout [String], depth: Int) {
        guard depth < 64 else {
            errors.append("\(path): schema recursion deeper than 64 at \(schemaPath)")
            return
        }
        let keywords: [String: JSONValue]
        switch schema {
        case .bool(true): return
        case .bool(false):
            errors.append("\(path): no value is allowed here")
            return
        case .object(let members): keywords = members
        default:
            errors.append("\(path): schema at \(schemaPath) is not an object or boolean")
            return
        }

        for keyword in keywords.keys.sorted() {
            let value = keywords[keyword]!
            switch keyword {
            case _ where SchemaValidator.annotations.contains(keyword):
                continue
            case "$ref":
                guard case .string(let reference) = value, let target = resolve(reference) else {
                    errors.append("\(path): unresolvable $ref \(value) at \(schemaPath)")
                    continue
                }
                check(instance, against: target, at: path, schemaPath: reference, errors: &errors, depth: depth + 1)
            case "type":
                let allowed: [String]
                switch value {
                case .string(let name): allowed = [name]
                case .array(let names): allowed = names.compactMap { if case .string(let name) = $0 { name } else { nil } }
                default: allowed = []
                }
                let actual = instance.typeName
                if !allowed.contains(actual) && !(actual == "integer" && allowed.contains("number")) {
                    errors.append("\(path): expected \(allowed.joined(separator: " or ")), got \(actual)")
                }
            case "const":
                if !instance.jsonEquals(value) { errors.append("\(path): expected the constant \(describe(value)), got \(describe(instance))") }
            case "enum":
                guard case .array(let options) = value else {
                    errors.append("\(path): enum at \(schemaPath) is not an array")
                    continue
                }
                if !options.contains(where: instance.jsonEquals) {
                    errors.append("\(path): \(describe(instance)) is not one of \(options.map(describe).joined(separator: ", "))")
                }
            case "pattern":
                guard case .string(let text) = instance else { continue }
                guard case .string(let pattern) = value, let regex = try? Regex(pattern) else {
                    errors.append("\(path): invalid pattern \(value) at \(schemaPath)")
                    continue
                }
                if (try? regex.firstMatch(in: text)) == nil {
                    errors.append("\(path): \(describe(instance)) does not match \(pattern)")
                }
            case "minimum":
                guard let number = instance.numericValue else { continue }
                guard let minimum = value.numericValue else {
                    errors.append("\(path): minimum at \(schemaPath) is not a number")
                    continue
                }
                if number < minimum { errors.append("\(path): \(describe(instance)) is less than the minimum \(describe(value))") }
            case "required":
                guard case .object(let members) = instance else { continue }
                guard case .array(let names) = value else {
                    errors.append("\(path): required at \(schemaPath) is not an array")
                    continue
                }
                for case .string(let name) in names where members[name] == nil {
                    errors.append("\(path): missing required property '\(name)'")
                }
            case "properties":
                guard case .object(let members) = instance, case .object(let propertySchemas) = value else { continue }
                for name in propertySchemas.keys.sorted() {
                    guard let member = members[name] else { continue }
                    check(member, against: propertySchemas[name]!, at: "\(path).\(name)",
                          schemaPath: "\(schemaPath)/properties/\(name)", errors: &errors, depth: depth + 1)
                }
            case "additionalProperties":
                guard case .object(let members) = instance else { continue }
                var known: Set<String> = []
                if case .object(let propertySchemas)? = keywords["properties"] { known = Set(propertySchemas.keys) }
                for name in members.keys.sorted() where !known.contains(name) {
                    if case .bool(false) = value {
                        errors.append("\(path): unexpected property '\(name)'")
                    } else {
                        check(members[name]!, against: value, at: "\(path).\(name)",
                              schemaPath: "\(schemaPath)/additionalProperties", errors: &errors, depth: depth + 1)
                    }
                }
            case "items":
                guard case .array(let items) = instance else { continue }
                for (index, item) in items.enumerated() {
                    check(item, against: value, at: "\(path)[\(index)]", schemaPath: "\(schemaPath)/items",
                          errors: &errors, depth: depth + 1)
                }
            default:
                errors.append("\(path): the schema uses '\(keyword)' at \(schemaPath), which this validator does not implement")
            }
        }
    }

    /// Follows a `#/...` JSON pointer into the schema document.
    private func resolve(_ reference: String) -> JSONValue? {
        guard reference.hasPrefix("#") else { return nil }
        var current = schema
        for token in reference.dropFirst().split(separator: "/") {
            let key = token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            switch current {
            case .object(let members):
                guard let next = members[key] else { return nil }
                current = next
            case .array(let items):
                guard let index = Int(key), items.indices.contains(index) else { return nil }
                current = items[index]
            default:
                return nil
            }
        }
        return current
    }

    /// A short rendering of a value for messages.
    private func describe(_ value: JSONValue) -> String {
        guard let data = try? value.data(), let text = String(data: data, encoding: .utf8) else { return value.typeName }
        return text.count > 60 ? String(text.prefix(57)) + "..." : text
    }
}
