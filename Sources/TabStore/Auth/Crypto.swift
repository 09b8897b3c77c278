import CCrypto

/// The few primitives TabStore needs, all from OpenSSL's libcrypto: nothing here is hand-rolled.
package enum Crypto {
    /// HMAC-SHA256 of `message` under `key`.
    package static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        key.withUnsafeBytes { keyBuffer in
            message.withUnsafeBytes { messageBuffer in
                _ = HMAC(EVP_sha256(), keyBuffer.baseAddress, Int32(keyBuffer.count),
                         messageBuffer.baseAddress?.assumingMemoryBound(to: UInt8.self), messageBuffer.count,
                         &output, &length)
            }
        }
        return Array(output.prefix(Int(length)))
    }

    /// An algorithm fetched from OpenSSL's default provider once: the one-shot `SHA256()` fetches it again on
    /// every call (a third of its time for a request-sized input). A fetched `EVP_MD` is immutable and may be
    /// used from any thread.
    private struct Fetched: @unchecked Sendable {
        let digest: OpaquePointer?
    }

    private static let sha256Algorithm = Fetched(digest: EVP_MD_fetch(nil, "SHA256", nil))

    /// SHA-256 of `data`.
    package static func sha256(_ data: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        var length: UInt32 = 0
        let ok = data.withUnsafeBytes { buffer in
            EVP_Digest(buffer.baseAddress, buffer.count, &output, &length, sha256Algorithm.digest, nil)
        }
        precondition(ok == 1 && length == UInt32(SHA256_DIGEST_LENGTH), "EVP_Digest(SHA-256) failed: libcrypto has no SHA-256")
        return output
    }

    /// Cryptographically secure random bytes.
    package static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let ok = RAND_bytes(&bytes, Int32(count))
        precondition(ok == 1, "RAND_bytes failed: the system has no entropy source")
        return bytes
    }

    /// Compares in time that does not depend on where the inputs differ.
    package static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.withUnsafeBytes { left in
            rhs.withUnsafeBytes { right in CRYPTO_memcmp(left.baseAddress, right.baseAddress, left.count) == 0 }
        }
    }

    /// A new signing secret: 256 random bits, base64url without padding.
    package static func newSecret() -> String { Base64URL.encode(randomBytes(32)) }
}

/// RFC 4648 §5 base64url without padding, as JWTs use it.
package enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    package static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            index += 3
        }
        let rest = bytes.count - index
        if rest == 1 {
            let n = UInt32(bytes[index]) << 16
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)]]
        } else if rest == 2 {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)]]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes unpadded base64url; nil for any other character, padding, or an impossible length.
    package static func decode(_ text: String) -> [UInt8]? { decode(Array(text.utf8)[...]) }

    package static func decode(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(text.count)
        for byte in text {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(byte - 65)
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(byte - 97 + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(byte - 48 + 52)
            case UInt8(ascii: "-"): values.append(62)
            case UInt8(ascii: "_"): values.append(63)
            default: return nil
            }
        }
        if values.count % 4 == 1 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index + 4 <= values.count {
            let n = UInt32(values[index]) << 18 | UInt32(values[index + 1]) << 12 | UInt32(values[index + 2]) << 6 | UInt32(values[index + 3])
            out += [UInt8(n >> 16 & 255), UInt8(n >> 8 & 255), UInt8(n & 255)]
            index += 4
        }
        // The last character's unused bits must be zero (RFC 4648 §3.5): one encoding per value, so a
        // token cannot be altered without changing its meaning (found by the JWT fuzz target).
        let rest = values.count - index
        if rest == 2 {
            guard values[index + 1] & 0x0F == 0 else { return nil }
            let n = UInt32(values[index]) << 18 | UInt32(values[index + 1]) << 12
            out.append(UInt8(n >> 16 & 255))
        } else if rest == 3 {
            guard values[index + 2] & 0x03 == 0 else { return nil }
            let n = UInt32(values[index]) << 18 | UInt32(values[index + 1]) << 12 | UInt32(values[index + 2]) << 6
            out += [UInt8(n >> 16 & 255), UInt8(n >> 8 & 255)]
        }
        return out
    }
}
