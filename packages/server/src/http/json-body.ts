/**
 * JSON request bodies: read (decompressed per Content-Encoding, bounded by the JSON limit), decoded
 * as UTF-8, parsed, and bounded in depth. Every failure is a 422 in FastAPI's shape and names
 * nothing of the body (it may hold a secret): a syntax error is `["body", <character position>]`
 * with Python's reason, a body that is not what its Content-Encoding says is `["body"]`. A body
 * over the limit is a 413.
 */
import type { Readable, Transform } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import express, { type Request, type RequestHandler } from "express";
import { RequestValidationError } from "../core/errors.js";
import { JSON_MEDIA_TYPES } from "../api/body.js";
import { HttpError } from "../core/errors.js";


interface BodyReadError extends Error {
  type?: string;
  status?: number;
  code?: string;
}

function invalidBody(msg: string, type = "value_error"): RequestValidationError {
  return new RequestValidationError([{ loc: ["body"], msg, type }]);
}

/** An error of the body reader as what the client gets (undefined: the client is gone). */
function readError(error: BodyReadError, encoding: string): Error | undefined {
  switch (error.type) {
    case "request.aborted":
      return undefined;
    case "entity.too.large":
      return new HttpError(413, `The request body is larger than the server accepts (${error.message})`);
    case "encoding.unsupported":
      return invalidBody(`Content-Encoding ${encoding} is not supported: send identity, gzip, deflate or br`);
    case "request.size.invalid":
      return invalidBody("The body is not as long as its Content-Length says");
  }
  // A decompression stream failed: the bytes are not what the Content-Encoding says.
  if (error.status === 400) return invalidBody(`The body is not valid ${encoding} data (Content-Encoding: ${encoding})`);
  return error;
}

/**
 * Reads a JSON body into `req.body` as bytes (a Buffer); a request without a JSON body (none, or
 * another media type) leaves `req.body` undefined.
 */
export function jsonBodyBytes(limitBytes: number): RequestHandler {
  const raw = express.raw({ type: [...JSON_MEDIA_TYPES], limit: limitBytes });
  return (req, res, next) => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers["content-type"] ?? "")?.[1];
    if (charset !== undefined && !/^utf-?8$/i.test(charset) && /json/i.test(req.headers["content-type"] ?? "")) {
      req.resume();
      return next(invalidBody(`charset ${charset} is not supported: JSON is sent as UTF-8`));
    }
    raw(req, res, (error?: unknown) => {
      if (error === undefined) return next();
      const answer = readError(error as BodyReadError, String(req.headers["content-encoding"] ?? "identity").toLowerCase());
      if (answer) next(answer);
    });
  };
}

/**
 * The bytes of a JSON body as they arrive, decompressed per Content-Encoding: for a body too large
 * to gather on the request thread (a large replay goes, chunk by chunk, to the import thread).
 * Yields nothing when the request has no body of `mediaTypes` (JSON by default). Throws as jsonBodyBytes answers: 413 past
 * `limitBytes`, 422 for a body that is not what its Content-Encoding says.
 */
export async function* jsonBodyChunks(req: Request, limitBytes: number, mediaTypes: readonly string[] = JSON_MEDIA_TYPES): AsyncGenerator<Buffer> {
  const contentType = req.headers["content-type"] ?? "";
  if (!req.is([...mediaTypes])) {
    req.resume();
    return;
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    req.resume();
    throw invalidBody(`charset ${charset} is not supported: JSON is sent as UTF-8`);
  }
  const encoding = String(req.headers["content-encoding"] ?? "identity").toLowerCase();
  const decompress = DECOMPRESSORS[encoding];
  if (!decompress && encoding !== "identity") {
    req.resume();
    throw invalidBody(`Content-Encoding ${encoding} is not supported: send identity, gzip, deflate or br`);
  }
  let source: Readable = req;
  if (decompress) {
    const decompressor = decompress();
    // A client that goes away ends the decompressor too (with an error); req itself is never
    // destroyed here, so that an answer (413, 422) can still be sent.
    req.on("error", (error) => decompressor.destroy(error));
    req.on("close", () => !req.readableEnded && decompressor.destroy(new Error("the client closed the connection")));
    source = req.pipe(decompressor);
  }
  let size = 0;
  try {
    for await (const chunk of source.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limitBytes) {
        throw new HttpError(413, `The request body is larger than the server accepts (more than ${limitBytes} bytes)`);
      }
      yield chunk;
    }
  } catch (error) {
    if (error instanceof HttpError) throw error;
    const code = (error as { code?: unknown }).code;
    if (decompress && typeof code === "string" && /^(Z_|ERR__|ERR_BROTLI)/.test(code)) {
      throw invalidBody(`The body is not valid ${encoding} data (Content-Encoding: ${encoding})`);
    }
    throw error;
  } finally {
    if (source !== req) source.destroy();
    if (!req.readableEnded && !req.destroyed) {
      req.unpipe();
      req.resume(); // the rest is read and dropped, so that the client gets its answer
    }
  }
}

const DECOMPRESSORS: Readonly<Record<string, () => Transform>> = {
  gzip: () => createGunzip(),
  deflate: () => createInflate(),
  br: () => createBrotliDecompress(),
};
