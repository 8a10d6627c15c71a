/**
 * Opaque page cursors (`next_page_id`), for the server and the browser mock alike. A cursor carries
 * the position of the last event of a page, the conversation and the order it belongs to, so that a
 * cursor of another conversation or another order is recognised and refused (422), never silently
 * restarted at page 1 as the reference implementation does. The signature is injected: the server
 * signs with HMAC-SHA256 under its secret (cursor.ts: a cursor of another server is refused too),
 * the browser mock with {@link UNSIGNED_CURSORS} (a mock has no secret to keep). The format:
 * `base64url(JSON [1, conversationId, order, ts, seq])`, then `.` and the signature when there is one.
 *
 * Also here: where a page starts from a `page_id` ({@link pageStart}), the same for both.
 */
import type { Position } from "../store/types.js";
import { RequestValidationError } from "./errors.js";

export interface CursorScope {
  conversationId: string;
  order: "asc" | "desc";
}

export type CursorResult = { ok: true; position: Position } | { ok: false; reason: string };

export interface CursorCodec {
  encode(scope: CursorScope, position: Position): string;
  decode(scope: CursorScope, cursor: string): CursorResult;
}

/** Signs a cursor's payload (its base64url text) and checks a signature; `""` is no signature. */
export interface CursorSigner {
  sign(payload: string): string;
  verify(payload: string, signature: string): boolean;
}

/** No signature: the payload alone is the cursor (the browser mock's). */
export const UNSIGNED_CURSORS: CursorSigner = { sign: () => "", verify: (_payload, signature) => signature === "" };

const VERSION = 1;
/** The longest page_id that can be a cursor (the spec's maxLength of page_id). */
const MAX_CURSOR = 512;

/** The reason of a page_id that is no cursor of this server at all (forged, truncated, or something else). */
export const NOT_A_CURSOR = "is not a page cursor issued by this server";

/** base64url without padding of a text's UTF-8 bytes, as Node's `Buffer#toString("base64url")`. */
function toBase64Url(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The UTF-8 text of base64url (or base64) bytes; undefined when it is not base64. */
function fromBase64Url(encoded: string): string | undefined {
  try {
    const binary = atob(encoded.replace(/-/g, "+").replace(/_/g, "/"));
    return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  } catch {
    return undefined;
  }
}

/** How many issued cursors a codec keeps (the latest; the oldest goes first). */
const ISSUED_KEPT = 256;

/** The page cursors signed by `signer`. */
export function cursorCodec(signer: CursorSigner): CursorCodec {
  // The cursors issued last, by scope and position: a page asked for again (a frontend polling the
  // same page) gets its next_page_id without encoding and signing it again (an HMAC in the server:
  // ~25 µs of each event search of a mock).
  const issued = new Map<string, string>();
  return {
    encode(scope, position) {
      const key = `${scope.conversationId} ${scope.order} ${position.ts} ${position.seq}`;
      let cursor = issued.get(key);
      if (cursor === undefined) {
        const payload = toBase64Url(JSON.stringify([VERSION, scope.conversationId, scope.order, position.ts, position.seq]));
        const signature = signer.sign(payload);
        cursor = signature === "" ? payload : `${payload}.${signature}`;
        if (issued.size >= ISSUED_KEPT) issued.delete(issued.keys().next().value!);
        issued.set(key, cursor);
      }
      return cursor;
    },
    decode(scope, cursor) {
      const [payload, signature = "", extra] = cursor.split(".");
      if (!payload || extra !== undefined || cursor.length > MAX_CURSOR || !signer.verify(payload, signature)) return { ok: false, reason: NOT_A_CURSOR };
      let fields: unknown;
      try {
        fields = JSON.parse(fromBase64Url(payload) ?? "");
      } catch {
        return { ok: false, reason: NOT_A_CURSOR };
      }
      const [version, conversationId, order, ts, seq] = Array.isArray(fields) ? (fields as unknown[]) : [];
      if (version !== VERSION || typeof ts !== "number" || typeof seq !== "number") return { ok: false, reason: NOT_A_CURSOR };
      if (conversationId !== scope.conversationId) return { ok: false, reason: "belongs to another conversation" };
      if (order !== scope.order) return { ok: false, reason: `was issued for sort_order ${order === "asc" ? "TIMESTAMP" : "TIMESTAMP_DESC"}` };
      return { ok: true, position: { ts, seq } };
    },
  };
}

/**
 * Where a page starts: strictly after the position a `next_page_id` carries, or AT an event given
 * by its id (the agent server's meaning of `page_id`: that event comes first if the filters keep
 * it, in the page's order, and it may be one they do not keep). Anything else is a 422 at
 * `["query", "page_id"]` where the agent server silently starts over.
 * @param positionOf the stored position of an event id in the scope's conversation
 * @throws RequestValidationError
 */
export async function pageStart(
  positionOf: (conversationId: string, eventId: string) => Promise<Position | undefined>,
  cursors: CursorCodec,
  scope: CursorScope,
  pageId: string,
): Promise<Position> {
  const decoded = cursors.decode(scope, pageId);
  if (decoded.ok) return decoded.position;
  const at = await positionOf(scope.conversationId, pageId);
  // The position just before the event in the page's order (seqs are unique), so that it is the first considered.
  if (at) return { ts: at.ts, seq: scope.order === "asc" ? at.seq - 1 : at.seq + 1 };
  const reason = decoded.reason === NOT_A_CURSOR ? "is neither a next_page_id of this server nor the id of an event of this conversation" : decoded.reason;
  throw new RequestValidationError([{ loc: ["query", "page_id"], msg: `page_id ${reason}`, type: "value_error" }]);
}
