/**
 * Opaque page cursors (`next_page_id`). A cursor carries the position of the last event of a page,
 * the conversation and the order it belongs to, signed with HMAC-SHA256 so that a cursor from
 * another conversation, another order or another server is recognised and refused (422), never
 * silently restarted at page 1 as the reference implementation does.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Position } from "./store/types.js";

export interface CursorScope {
  conversationId: string;
  order: "asc" | "desc";
}

export type CursorResult = { ok: true; position: Position } | { ok: false; reason: string };

export interface CursorCodec {
  encode(scope: CursorScope, position: Position): string;
  decode(scope: CursorScope, cursor: string): CursorResult;
}

const VERSION = 1;

/** The reason of a page_id that is no cursor of this server at all (forged, truncated, or something else). */
export const NOT_A_CURSOR = "is not a page cursor issued by this server";

export function createCursorCodec(secret: Buffer): CursorCodec {
  const key = createHmac("sha256", secret).update("acs page cursor v1").digest();
  const sign = (payload: string) => createHmac("sha256", key).update(payload).digest().subarray(0, 16);
  return {
    encode(scope, position) {
      const payload = Buffer.from(JSON.stringify([VERSION, scope.conversationId, scope.order, position.ts, position.seq])).toString("base64url");
      return `${payload}.${sign(payload).toString("base64url")}`;
    },
    decode(scope, cursor) {
      const [payload, signature, extra] = cursor.split(".");
      if (!payload || !signature || extra !== undefined || cursor.length > 512) return { ok: false, reason: NOT_A_CURSOR };
      const expected = sign(payload);
      const given = Buffer.from(signature, "base64url");
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return { ok: false, reason: NOT_A_CURSOR };
      }
      let fields: unknown[];
      try {
        fields = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as unknown[];
      } catch {
        return { ok: false, reason: NOT_A_CURSOR };
      }
      const [version, conversationId, order, ts, seq] = Array.isArray(fields) ? fields : [];
      if (version !== VERSION || typeof ts !== "number" || typeof seq !== "number") return { ok: false, reason: NOT_A_CURSOR };
      if (conversationId !== scope.conversationId) return { ok: false, reason: "belongs to another conversation" };
      if (order !== scope.order) return { ok: false, reason: `was issued for sort_order ${order === "asc" ? "TIMESTAMP" : "TIMESTAMP_DESC"}` };
      return { ok: true, position: { ts, seq } };
    },
  };
}
