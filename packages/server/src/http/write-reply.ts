/**
 * Writes an operation's reply to a Node response: the head and the body's parts in one writev
 * (Node corks the socket until the next tick), never copied into one buffer first; a stream piped
 * with exactly its announced length.
 */
import type { ServerResponse } from "node:http";
import { pipeline, Readable } from "node:stream";
import { replyLength } from "../api/reply.js";
import type { ApiReply } from "../api/types.js";

export function writeReply(res: ServerResponse, reply: ApiReply, onStreamError?: (error: Error) => void): void {
  // A 204 has no body and so no Content-Length (RFC 9110 §8.6).
  res.writeHead(reply.status, reply.status === 204 ? reply.headers : { ...reply.headers, "Content-Length": String(replyLength(reply)) });
  const { stream } = reply;
  if (stream) {
    // (A range cannot say "no byte": an empty file's stream is closed unread.)
    if (stream.length === 0) {
      stream.cancel();
      return void res.end();
    }
    // A read error after the head cannot change the status: pipeline cuts the response off, which
    // the client sees against Content-Length (never a short body taken for the whole).
    const chunks = stream.chunks();
    const source = chunks instanceof Readable ? chunks : Readable.from(chunks);
    pipeline(source, res, (error) => {
      if (error && (error as NodeJS.ErrnoException).code !== "ERR_STREAM_PREMATURE_CLOSE") onStreamError?.(error);
    });
    return;
  }
  const parts = reply.body;
  for (let i = 0; i < parts.length - 1; i++) res.write(parts[i]);
  res.end(parts.at(-1));
}
