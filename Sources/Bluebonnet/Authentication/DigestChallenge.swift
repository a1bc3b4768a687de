import Crypto
import Foundation

/// A Digest challenge this client can answer (RFC 7616), and the `Authorization` value that answers it.
struct DigestChallenge: Sendable {
    /// The hash algorithms answered; `SHA-512-256` is not (swift-crypto has no SHA-512/256).
    enum Algorithm: String, CaseIterable, Sendable {
        case md5 = "MD5"
        case md5Session = "MD5-sess"
        case sha256 = "SHA-256"
        case sha256Session = "SHA-256-sess"

        /// The order in which offers are preferred: SHA-256 over MD5.
        var strength: Int {
            switch self {
            case .md5, .md5Session: 1
            case .sha256, .sha256Session: 2
            }
        }

        /// Whether `A1` takes the nonces in (the `-sess` variants).
        var isSession: Bool { self == .md5Session || self == .sha256Session }

        /// The lowercase hex digest of `bytes`.
        func hex<Bytes: DataProtocol>(_ bytes: Bytes) -> String {
            switch self {
            case .md5, .md5Session: Self.hex(Insecure.MD5.hash(data: bytes))
            case .sha256, .sha256Session: Self.hex(SHA256.hash(data: bytes))
            }
        }

        func hex(_ string: String) -> String { hex(Array(string.utf8)) }

        private static func hex<D: Digest>(_ digest: D) -> String {
            let digits = Array("0123456789abcdef".utf8)
            var result: [UInt8] = []
            result.reserveCapacity(D.byteCount * 2)
            for byte in digest {
                result.append(digits[Int(byte >> 4)])
                result.append(digits[Int(byte & 0x0F)])
            }
            return String(decoding: result, as: UTF8.self)
        }
    }

    /// The `qop` chosen from the server's offer.
    enum QualityOfProtection: String, Sendable {
        /// The request line is protected.
        case auth
        /// The request line and body are protected.
        case authInt = "auth-int"
    }

    let realm: String
    let nonce: String
    let opaque: String?
    /// The algorithm token as the server wrote it, echoed back unchanged.
    let algorithmToken: String?
    let algorithm: Algorithm
    /// `nil` for an RFC 2069 challenge that offers no `qop`.
    let qop: QualityOfProtection?
    let userhash: Bool
    /// The server said the last nonce expired but the credentials were right (`stale=true`).
    let isStale: Bool

    /// The answerable form of `challenge`, or `nil` when it is not Digest, lacks a realm or nonce, or offers only
    /// what this client does not support.
    ///
    /// - Parameters:
    ///   - challenge:    A parsed challenge.
    ///   - bodyIsHashable: Whether the request's body is in memory, as `auth-int` needs it hashed.
    init?(_ challenge: AuthenticationChallenge, bodyIsHashable: Bool) {
        guard challenge.isScheme("Digest"), let realm = challenge.realm, let nonce = challenge["nonce"] else {
            return nil
        }
        let token = challenge["algorithm"]
        guard
            let algorithm = Algorithm.allCases.first(where: {
                $0.rawValue.equalsIgnoringCase(token ?? "MD5")
            })
        else { return nil }
        if let offered = challenge["qop"] {
            let options = Set(
                offered.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
            // `auth` when offered: it needs no body, which may be a stream that cannot be read twice.
            if options.contains("auth") {
                qop = .auth
            } else if options.contains("auth-int"), bodyIsHashable {
                qop = .authInt
            } else {
                return nil
            }
        } else {
            // A `-sess` A1 takes the `cnonce`, which only a `qop` answer sends (RFC 2617 §3.2.2.2).
            guard !algorithm.isSession else { return nil }
            qop = nil
        }
        self.realm = realm
        self.nonce = nonce
        opaque = challenge["opaque"]
        algorithmToken = token
        self.algorithm = algorithm
        userhash = challenge["userhash"]?.lowercased() == "true"
        isStale = challenge["stale"]?.lowercased() == "true"
    }

    /// The `Authorization` value answering this challenge.
    ///
    /// - Parameters:
    ///   - username:   The user.
    ///   - password:   The password.
    ///   - method:     The request method.
    ///   - uri:        The request-target as sent (path and query).
    ///   - body:       The request body, for `auth-int`.
    ///   - cnonce:     The client nonce; fresh for every answer.
    ///   - nonceCount: How many times this client has used `nonce`, this answer included.
    func authorization(
        username: String, password: String, method: String, uri: String, body: Data?,
        cnonce: String, nonceCount: Int
    ) -> String {
        var a1 = algorithm.hex("\(username):\(realm):\(password)")
        if algorithm.isSession { a1 = algorithm.hex("\(a1):\(nonce):\(cnonce)") }
        let a2: String
        switch qop {
        case .authInt: a2 = algorithm.hex("\(method):\(uri):\(algorithm.hex(body ?? Data()))")
        case .auth, nil: a2 = algorithm.hex("\(method):\(uri)")
        }
        let nc = String(format: "%08x", nonceCount)
        let response =
            if let qop {
                algorithm.hex("\(a1):\(nonce):\(nc):\(cnonce):\(qop.rawValue):\(a2)")
            } else {
                algorithm.hex("\(a1):\(nonce):\(a2)")
            }
        var fields: [String] = []
        if userhash {
            fields.append("username=\(Self.quoted(algorithm.hex("\(username):\(realm)")))")
        } else if username.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            fields.append("username=\(Self.quoted(username))")
        } else {
            // RFC 7616 §3.4.4: a name a quoted-string cannot carry goes in `username*`, RFC 8187-encoded.
            fields.append("username*=UTF-8''\(Self.extendedValue(username))")
        }
        fields.append("realm=\(Self.quoted(realm))")
        fields.append("uri=\(Self.quoted(uri))")
        if let algorithmToken { fields.append("algorithm=\(algorithmToken)") }
        fields.append("nonce=\(Self.quoted(nonce))")
        if let qop {
            fields.append("nc=\(nc)")
            fields.append("cnonce=\(Self.quoted(cnonce))")
            fields.append("qop=\(qop.rawValue)")
        }
        fields.append("response=\(Self.quoted(response))")
        if let opaque { fields.append("opaque=\(Self.quoted(opaque))") }
        if userhash { fields.append("userhash=true") }
        return "Digest " + fields.joined(separator: ", ")
    }

    /// A fresh client nonce: 128 random bits, hex.
    static func makeClientNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(format: "%016llx%016llx", generator.next() as UInt64, generator.next() as UInt64)
    }

    /// `value` as an RFC 9110 quoted-string.
    static func quoted(_ value: String) -> String {
        "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// RFC 8187 `value-chars`: UTF-8, with every byte but `attr-char` percent-encoded.
    private static func extendedValue(_ value: String) -> String {
        var result = ""
        for byte in value.utf8 {
            let scalar = Unicode.Scalar(byte)
            if byte < 0x80,
                CharacterSet.alphanumerics.contains(scalar) || "!#$&+-.^_`|~".unicodeScalars.contains(scalar)
            {
                result.unicodeScalars.append(scalar)
            } else {
                result += String(format: "%%%02X", byte)
            }
        }
        return result
    }
}
