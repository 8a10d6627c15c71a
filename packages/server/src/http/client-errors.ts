/**
 * Answers that never reach Express, in the interface's error shape (`{"detail": …}`, JSON): what
 * Node's HTTP parser refuses (400, 431 for headers over its limit, 408 for a request that does not
 * arrive in time) and upgrade requests the live channel refuses. Node's own answers have empty
 * bodies; ws's are text/html.
 */
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";

/** What llhttp's error codes mean, for the `detail` of a 400. */
const PARSE_ERRORS: Readonly<Record<string, string>> = {
  HPE_INVALID_METHOD: "the request method is not valid",
  HPE_INVALID_URL: "the request target is not valid",
  HPE_INVALID_VERSION: "the HTTP version is not valid",
  HPE_INVALID_CONSTANT: "the request line is not HTTP/1.1",
  HPE_INVALID_HEADER_TOKEN: "a header line is not valid",
  HPE_INVALID_CONTENT_LENGTH: "the Content-Length header is not valid",
  HPE_UNEXPECTED_CONTENT_LENGTH: "Content-Length and Transfer-Encoding were both sent",
  HPE_INVALID_TRANSFER_ENCODING: "the Transfer-Encoding header is not valid",
  HPE_INVALID_CHUNK_SIZE: "a chunk size of the chunked body is not valid",
  HPE_CR_EXPECTED: "a line does not end with CRLF",
  HPE_LF_EXPECTED: "a line does not end with CRLF",
  HPE_INVALID_EOF_STATE: "the connection ended inside the request",
};

/** Writes a complete JSON error response to a raw socket and closes it. */
export function rejectSocket(socket: Duplex, status: number, detail: string, headers: Record<string, string> = {}): void {
  if (!socket.writable) return void socket.destroy();
  const body = JSON.stringify({ detail });
  const head = {
    Connection: "close",
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": String(Buffer.byteLength(body)),
    ...headers,
  };
  socket.once("finish", () => socket.destroy());
  socket.on("error", () => socket.destroy());
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\n${Object.entries(head).map(([name, value]) => `${name}: ${value}`).join("\r\n")}\r\n\r\n${body}`);
}

/**
 * A request handler that first answers a request target that is neither a path (`/…`) nor an
 * absolute URL that parses (`GET http://[::1`, `GET *`) with a JSON 400: Express's router cannot
 * route such a target and its fallback answers HTML.
 */
export function guardRequestTarget(handler: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const target = req.url ?? "";
    if (target.startsWith("/") || (/^https?:\/\//i.test(target) && URL.canParse(target))) return handler(req, res);
    const body = JSON.stringify({ detail: "Bad Request: the request target is not a path" });
    res.writeHead(400, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(body), Connection: "close" });
    res.end(body);
  };
}

interface ClientError extends Error {
  code?: string;
}

/** The status and `detail` of an error Node's HTTP server reports as `clientError`. */
function clientErrorAnswer(error: ClientError): { status: number; detail: string } {
  if (error.code === "HPE_HEADER_OVERFLOW") {
    return { status: 431, detail: "Request Header Fields Too Large: the request line and headers are over the server's limit (16 KiB)" };
  }
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") return { status: 408, detail: "Request Timeout: the request did not arrive in time" };
  return { status: 400, detail: `Bad Request: ${PARSE_ERRORS[error.code ?? ""] ?? "the request is not valid HTTP/1.1"}` };
}

/** Answers Node's `clientError`s with JSON bodies (once no response of that connection has begun). */
export function answerClientErrors(server: Server): void {
  server.on("clientError", (error: ClientError, socket: Duplex) => {
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === "ECONNRESET" || inFlight?.headersSent) return void socket.destroy();
    const { status, detail } = clientErrorAnswer(error);
    rejectSocket(socket, status, detail);
  });
}
