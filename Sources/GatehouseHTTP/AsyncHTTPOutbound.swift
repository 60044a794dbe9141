import AsyncHTTPClient
import Foundation
import GatehouseCore
import NIOCore
import NIOHTTP1

/// `OutboundHTTP` on async-http-client: one client for the process, on NIO's shared event loops,
/// never following redirects, and failing at once when a connection cannot be made (a refused
/// connection is an answer: the service is down), as the LDAP pool does.
public struct AsyncHTTPOutbound: OutboundHTTP {
    /// Lives as long as the process, so it is never shut down.
    private static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10)), decompression: .disabled)
        // By default the pool retries a failed connect with backoff until the request's deadline,
        // so a refused connection looked like a timeout after seconds of waiting.
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    public init() {}

    public func send(_ request: OutboundRequest) async throws(OutboundHTTPError) -> OutboundResponse {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for header in request.headers { outgoing.headers.add(name: header.name, value: header.value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let deadline = NIODeadline.now() + .milliseconds(Int64(request.timeout * 1000))
        do {
            let response = try await Self.client.execute(outgoing, deadline: deadline)
            let body = try await response.body.collect(upTo: request.maxResponseBytes)
            return OutboundResponse(status: Int(response.status.code), body: Data(body.readableBytesView))
        } catch let error as HTTPClientError {
            if [.deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout].contains(error) { throw .timeout }
            if [.invalidURL, .emptyHost, .emptyScheme].contains(error) { throw .invalidURL(request.url) }
            throw .unreachable(String(describing: error))
        } catch is NIOTooManyBytesError {
            throw .responseTooLarge
        } catch {
            throw .unreachable(String(describing: error))
        }
    }
}
