import Crypto
import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import SwiftASN1
import X509

/// An OCSP responder (RFC 6960) for revocation tests, served by every test server under `/ocsp/{id}/{answer}`:
/// `good`, `revoked` or `unknown` for the certificate asked about, signed with the issuer's key. `/ocsp/{id}/issuer` serves the issuer's certificate (DER), as a leaf's Authority
/// Information Access `caIssuers` names it. The answers are encoded here with SwiftASN1 (swift-certificates' OCSP
/// response types are internal).
public enum OCSPResponder {
    private static let issuers = NIOLockedValueBox<[String: TestCertificates.Identity]>([:])

    /// Makes `issuer` answer at `/ocsp/{id}/...` of any test server; returns the id.
    public static func register(_ issuer: TestCertificates.Identity) -> String {
        let id = UUID().uuidString.lowercased()
        issuers.withLockedValue { $0[id] = issuer }
        return id
    }

    static func issuer(_ id: String) -> TestCertificates.Identity? {
        issuers.withLockedValue { $0[id] }
    }

    /// `/ocsp/{id}/{good|revoked|unknown|issuer}`.
    static func respond(_ call: HTTPBinCall) -> Response {
        let segments = call.segments
        guard segments.count == 3, let issuer = issuer(segments[1]) else {
            return HTTPBinResponses.text("Unknown responder\n", status: .notFound)
        }
        if segments[2] == "issuer" {
            return HTTPBinResponses.bytes(Data(issuer.der), contentType: "application/pkix-cert")
        }
        guard let answer = Answer(rawValue: segments[2]), call.method == "POST" else {
            return HTTPBinResponses.text("Bad OCSP request\n", status: .badRequest)
        }
        do {
            let bytes = try response(to: Array(call.body), answer: answer, issuer: issuer)
            return HTTPBinResponses.bytes(Data(bytes), contentType: "application/ocsp-response")
        } catch {
            // RFC 6960 §2.3: malformedRequest (1), unsigned.
            return HTTPBinResponses.bytes(
                Data([0x30, 0x03, 0x0A, 0x01, 0x01]), contentType: "application/ocsp-response")
        }
    }

    /// What a certificate's status is said to be.
    public enum Answer: String, Sendable {
        case good, revoked, unknown
    }

    static let nonceOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 5, 5, 7, 48, 1, 2]
    static let basicResponseOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 5, 5, 7, 48, 1, 1]
    static let ecdsaWithSHA256: ASN1ObjectIdentifier = [1, 2, 840, 10045, 4, 3, 2]

    /// The DER `OCSPResponse` to a DER `OCSPRequest`: the first certificate it asks about, with `answer`, its nonce
    /// echoed, signed by `issuer`.
    static func response(to requestDER: [UInt8], answer: Answer, issuer: TestCertificates.Identity, now: Date = Date())
        throws -> [UInt8]
    {
        let (certID, nonce) = try read(requestDER)
        var data = DER.Serializer()
        try data.appendConstructedNode(identifier: .sequence) { data in
            // responderID byName: [1] EXPLICIT Name.
            try data.serialize(explicitlyTaggedWithTagNumber: 1, tagClass: .contextSpecific) {
                try $0.serialize(issuer.certificate.subject)
            }
            try data.serialize(generalizedTime(now))
            try data.appendConstructedNode(identifier: .sequence) { responses in
                try responses.appendConstructedNode(identifier: .sequence) { single in
                    single.serializeRawBytes(certID)
                    switch answer {
                    case .good:
                        single.serializeRawBytes([0x80, 0x00])
                    case .unknown:
                        single.serializeRawBytes([0x82, 0x00])
                    case .revoked:
                        try single.appendConstructedNode(
                            identifier: ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific)
                        ) {
                            try $0.serialize(generalizedTime(now.addingTimeInterval(-3600)))
                        }
                    }
                    try single.serialize(generalizedTime(now.addingTimeInterval(-60)))
                    try single.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) {
                        try $0.serialize(generalizedTime(now.addingTimeInterval(3600)))
                    }
                }
            }
            if let nonce {
                data.serialize(explicitlyTaggedWithTagNumber: 1, tagClass: .contextSpecific) { extensions in
                    extensions.appendConstructedNode(identifier: .sequence) { $0.serializeRawBytes(nonce) }
                }
            }
        }
        let responseData = data.serializedBytes
        let signature = try issuer.privateKey.signature(for: responseData).derRepresentation
        var basic = DER.Serializer()
        try basic.appendConstructedNode(identifier: .sequence) { basic in
            basic.serializeRawBytes(responseData)
            try basic.appendConstructedNode(identifier: .sequence) { try $0.serialize(ecdsaWithSHA256) }
            try basic.serialize(ASN1BitString(bytes: ArraySlice(signature)))
        }
        var response = DER.Serializer()
        try response.appendConstructedNode(identifier: .sequence) { response in
            // responseStatus ENUMERATED successful (0).
            response.serializeRawBytes([0x0A, 0x01, 0x00])
            try response.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { bytes in
                try bytes.appendConstructedNode(identifier: .sequence) { bytes in
                    try bytes.serialize(basicResponseOID)
                    try bytes.serialize(ASN1OctetString(contentBytes: ArraySlice(basic.serializedBytes)))
                }
            }
        }
        return response.serializedBytes
    }

    /// The DER of the first `CertID` a request asks about, and of its nonce extension, if any.
    private static func read(_ requestDER: [UInt8]) throws -> (certID: ArraySlice<UInt8>, nonce: ArraySlice<UInt8>?) {
        let request = try DER.parse(requestDER)
        guard case let .constructed(top) = request.content, let tbs = top.first(where: { _ in true }),
            case let .constructed(fields) = tbs.content
        else { throw ASN1Error.invalidASN1Object(reason: "no tbsRequest") }
        var certID: ArraySlice<UInt8>?
        var nonce: ArraySlice<UInt8>?
        for field in fields {
            if field.identifier == .sequence, case let .constructed(requests) = field.content,
                let first = requests.first(where: { _ in true }), case let .constructed(parts) = first.content,
                let id = parts.first(where: { _ in true })
            {
                certID = id.encodedBytes
            }
            if field.identifier == ASN1Identifier(tagWithNumber: 2, tagClass: .contextSpecific),
                case let .constructed(wrapped) = field.content, let list = wrapped.first(where: { _ in true }),
                case let .constructed(extensions) = list.content
            {
                for candidate in extensions {
                    guard case let .constructed(parts) = candidate.content, let oid = parts.first(where: { _ in true }),
                        (try? ASN1ObjectIdentifier(derEncoded: oid)) == nonceOID
                    else { continue }
                    nonce = candidate.encodedBytes
                }
            }
        }
        guard let certID else { throw ASN1Error.invalidASN1Object(reason: "no CertID") }
        return (certID, nonce)
    }

    private static func generalizedTime(_ date: Date) throws -> GeneralizedTime {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return try GeneralizedTime(
            year: parts.year!, month: parts.month!, day: parts.day!, hours: parts.hour!,
            minutes: parts.minute!, seconds: parts.second!, fractionalSeconds: 0)
    }
}
