/**
 * The API without a transport: an operation of the spec takes an {@link ApiRequest} (path
 * parameters, query, headers, a body to read) and gives an {@link ApiReply} (status, headers, body
 * parts). Hosts turn their requests into these and the replies back: the server's Node adapter
 * (http/node-host.ts) and the mock's MSW handlers; neither answers an operation itself.
 */
import type { operations } from "@acs-toolkit/schema";

/** The spec's operations by `operationId`. */
export type OperationId = keyof operations;

/**
 * A request body, read as the operation needs it. A host reads its transport (a Node request, a
 * fetch `Request`) behind this; every reading is bounded by the host's JSON limit.
 */
export interface ApiBody {
  /** Content-Length, when the request gave one. */
  readonly length: number | undefined;
  /** Whether the body is compressed (a Content-Encoding other than identity). */
  readonly compressed: boolean;
  /** Whether the body's media type is one of `types` (`application/*+json` style wildcards allowed). */
  is(types: readonly string[]): boolean;
  /**
   * The bytes of a JSON body, decompressed; undefined when there is none or it is of another media
   * type. @throws HttpError 413 past the limit, RequestValidationError for a charset other than
   * UTF-8 or bytes that are not what their Content-Encoding says
   */
  jsonBytes(): Promise<Uint8Array | undefined>;
  /**
   * The decompressed bytes as they arrive when the body is of `mediaTypes` (nothing otherwise):
   * for bodies too large to gather first. @throws as {@link jsonBytes}
   */
  chunks(mediaTypes: readonly string[]): AsyncIterable<Uint8Array>;
  /** Reads and drops the body (an answer that needs none of it). */
  discard(): void;
}

/** A request to an operation. */
export interface ApiRequest {
  /** Path parameters, percent-decoded, by the names of the spec's path template. */
  params: Record<string, string>;
  /** Query parameters; one given more than once is an array (validation refuses it unless its schema is an array). */
  query: Record<string, unknown>;
  /** Request headers by lower-case name. */
  headers: Record<string, string | undefined>;
  body: ApiBody;
}

/**
 * A reply: a status, headers and the body as parts written in order (a page of events is spliced
 * from stored JSON texts and never copied into one buffer), or a stream of a known length.
 */
export interface ApiReply {
  status: number;
  headers: Record<string, string>;
  /** The body's parts, written in order; empty for no body. */
  body: readonly Uint8Array[];
  /** A body read as it is sent (a download), `length` bytes; `body` is empty then. */
  stream?: { length: number; chunks(): AsyncIterable<Uint8Array>; cancel(): void };
}

/** An operation: a request in, a reply out; its errors are thrown (see api/errors.ts). */
export type Operation = (request: ApiRequest) => Promise<ApiReply>;
