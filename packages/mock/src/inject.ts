/**
 * Runs one request through a Node request handler without any network: a real `IncomingMessage`
 * and `ServerResponse` on an in-memory socket, so Express (which swaps the prototypes of both) and
 * streamed bodies behave exactly as over TCP. The request is presented as HTTP/1.0, so the response
 * is neither chunked nor kept alive: its bytes are the status line, the headers, then the body.
 */
import { IncomingMessage, ServerResponse } from "node:http";
import { Duplex } from "node:stream";
import type { NodeHandler } from "./front.js";

interface InjectedRequest {
  method: string;
  /** Path and query, e.g. `/api/conversations/…/events/search?limit=5`. */
  url: string;
  headers: Record<string, string>;
  body?: Uint8Array;
}

interface InjectedResponse {
  status: number;
  /** In the order they were sent (`Set-Cookie` may repeat). */
  headers: Array<[string, string]>;
  body: Buffer;
}

/** The in-memory connection: what the response writes is collected. */
class MemorySocket extends Duplex {
  readonly written: Buffer[] = [];
  readonly remoteAddress = "127.0.0.1";
  readonly remotePort = 0;
  readonly localAddress = "127.0.0.1";
  readonly localPort = 0;
  readonly encrypted = false;

  override _read(): void {}
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.written.push(Buffer.from(chunk));
    callback();
  }
  setTimeout(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
}

/** Sends `request` to `handler` and resolves with the complete response. */
export function injectRequest(handler: NodeHandler, request: InjectedRequest): Promise<InjectedResponse> {
  const socket = new MemorySocket();
  const req = new IncomingMessage(socket as never);
  req.method = request.method.toUpperCase();
  req.url = request.url;
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 0;
  req.httpVersion = "1.0";
  const headers: Record<string, string> = {};
  const rawHeaders: string[] = [];
  for (const [name, value] of Object.entries(request.headers)) {
    headers[name.toLowerCase()] = value;
    rawHeaders.push(name, value);
  }
  if (request.body && request.body.length > 0) {
    headers["content-length"] = String(request.body.length);
    rawHeaders.push("content-length", String(request.body.length));
    delete headers["transfer-encoding"];
  }
  req.headers = headers;
  req.rawHeaders = rawHeaders;
  if (request.body && request.body.length > 0) req.push(Buffer.from(request.body));
  req.complete = true;
  req.push(null);

  const res = new ServerResponse(req);
  res.assignSocket(socket as never);
  return new Promise((resolve, reject) => {
    res.once("finish", () => {
      const raw = Buffer.concat(socket.written);
      const end = raw.indexOf("\r\n\r\n");
      const head = raw.subarray(0, end).toString("latin1").split("\r\n");
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? "")?.[1]);
      const headerList: Array<[string, string]> = head.slice(1).map((line) => {
        const colon = line.indexOf(":");
        return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
      });
      resolve({ status, headers: headerList, body: raw.subarray(end + 4) });
    });
    res.once("close", () => {
      if (!res.writableFinished) reject(new Error(`${request.method} ${request.url}: the handler closed the response without finishing it`));
    });
    handler(req, res);
  });
}
