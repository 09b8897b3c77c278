import Foundation

/// JSON coding of the client's models that keeps ids byte for byte, also as object member names.
///
/// Foundation's `JSONDecoder` and `JSONEncoder` hold an object's members in a Swift `[String: …]`, so two member
/// names that differ only in Unicode normalization (`"caf\u{E9}"`, `"cafe\u{301}"`: two tab ids on the server)
/// collapse into one there. `TabStoreJSON` gives such names a reserved spelling on their way through Foundation
/// (`"\u0000tabstore-id:<UTF-8 as hex>"`, never an id: ids hold no control characters) and turns it back into
/// the exact bytes on the other side, so `Customization.tabs` keeps both. The client reads and writes with it;
/// use it too where an app stores the models itself. With a plain `JSONEncoder`, a map holding such ids throws
/// rather than dropping one; a plain `JSONDecoder` keeps one of them.
public enum TabStoreJSON {
    /// Decodes `type` from `data`.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try JSONDecoder().decode(type, from: MemberNames.reserveAmbiguous(data))
    }

    /// `value` as JSON: member names sorted (names with a reserved spelling first, in byte order), slashes not
    /// escaped.
    public static func encode<T: Encodable>(_ value: T) throws -> Data {
        MemberNames.restoreReserved(try encoder.encode(value))
    }

    /// A time as the server writes it: RFC 3339 in UTC, whole seconds (`2026-11-29T22:00:00Z`).
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle())
    }

    /// `text` (RFC 3339, with or without fractional seconds) as a date.
    /// - Throws: `DecodingError.dataCorrupted` when it is not one.
    static func date<Key: CodingKey>(_ text: String, in container: KeyedDecodingContainer<Key>, forKey key: Key) throws -> Date {
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not an RFC 3339 time: \(text)")
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.userInfo[MemberNames.reserveKey] = true
        return encoder
    }()
}

/// A JSON object whose member names are ids (`Customization.tabs`, `TabLayout.selectionFallback`, …).
struct IDMap<Value> {
    var dictionary: [TabStoreID: Value]

    init(_ dictionary: [TabStoreID: Value]) { self.dictionary = dictionary }

    struct Key: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }
}

extension IDMap: Decodable where Value: Decodable {
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        var dictionary: [TabStoreID: Value] = [:]
        for key in container.allKeys {
            dictionary[MemberNames.id(key.stringValue)] = try container.decode(Value.self, forKey: key)
        }
        self.dictionary = dictionary
    }
}

extension IDMap: Encodable where Value: Encodable {
    func encode(to encoder: any Encoder) throws {
        let reserving = encoder.userInfo[MemberNames.reserveKey] as? Bool == true
        // Ids that one Swift String stands for: Foundation would keep one member of them.
        let ambiguous = Dictionary(grouping: dictionary.keys, by: \.string).values.filter { $0.count > 1 }.flatMap { $0 }
        if !reserving, let id = ambiguous.first {
            throw EncodingError.invalidValue(id, .init(codingPath: encoder.codingPath, debugDescription:
                "ids \(ambiguous.map(\.debugDescription)) differ only in Unicode normalization; JSONEncoder would keep one, TabStoreJSON keeps all"))
        }
        let reserved = Set(ambiguous)
        var container = encoder.container(keyedBy: Key.self)
        for (id, value) in dictionary {
            let name = reserving && (reserved.contains(id) || id.utf8.first == 0) ? MemberNames.reserved(id) : id.string
            try container.encode(value, forKey: Key(stringValue: name))
        }
    }
}

extension KeyedDecodingContainer {
    /// An object keyed by ids.
    func decodeIDMap<Value: Decodable>(_ type: Value.Type, forKey key: Key) throws -> [TabStoreID: Value] {
        try decode(IDMap<Value>.self, forKey: key).dictionary
    }

    /// An object keyed by ids; nil when the member is absent or null.
    func decodeIDMapIfPresent<Value: Decodable>(_ type: Value.Type, forKey key: Key) throws -> [TabStoreID: Value]? {
        try decodeIfPresent(IDMap<Value>.self, forKey: key)?.dictionary
    }
}
