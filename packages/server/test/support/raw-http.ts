/**
 * Raw bytes over a TCP connection, for what fetch cannot send: malformed request lines and headers,
 * upgrade requests with hostile targets, broken chunked encoding. Reads the first response.
 */
import { connect } from "node:net";

export interface RawReply {
  /** 0 when the connection closed without a response. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Whether the server closed the connection (it did if the promise resolved within the timeout). */
  closedByServer: boolean;
}

/** Sends `bytes` to the server at `url`; resolves once the server closes the connection (or after `timeoutMs`). */
export function rawRequest(url: string, bytes: string | Buffer, timeoutMs = 5_000): Promise<RawReply> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let closedByServer = false;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parseResponse(Buffer.concat(chunks).toString("latin1")), closedByServer });
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", () => {});
    socket.on("close", () => {
      closedByServer = true;
      finish();
    });
    socket.write(bytes);
  });
}

function parseResponse(text: string): Omit<RawReply, "closedByServer"> {
  const end = text.indexOf("\r\n\r\n");
  if (!text.startsWith("HTTP/")) return { status: 0, headers: {}, body: text };
  const head = end === -1 ? text : text.slice(0, end);
  const [statusLine = "", ...lines] = head.split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rawBody = end === -1 ? "" : text.slice(end + 4);
  const length = headers["content-length"] === undefined ? rawBody.length : Number(headers["content-length"]);
  return { status: Number(statusLine.split(" ")[1] ?? 0), headers, body: Buffer.from(rawBody.slice(0, length), "latin1").toString("utf8") };
}

/** The headers of a WebSocket upgrade request (valid key and version), each line ending in CRLF. */
export const UPGRADE_HEADERS = "Host: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
