/**
 * The server's page cursors: the core's codec (core/cursor.ts: payload, checks and reasons, shared
 * with the browser mock) signed with HMAC-SHA256 under the server's secret, so that a cursor of
 * another server, or a forged or truncated one, is refused (422) as well as one of another
 * conversation or order.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { cursorCodec, type CursorCodec, type CursorSigner } from "./core/cursor.js";

/** HMAC-SHA256 (its first 16 bytes, base64url) under a key derived from `secret`. */
function hmacCursorSigner(secret: Buffer): CursorSigner {
  const key = createHmac("sha256", secret).update("acs page cursor v1").digest();
  const mac = (payload: string) => createHmac("sha256", key).update(payload).digest().subarray(0, 16);
  return {
    sign: (payload) => mac(payload).toString("base64url"),
    verify(payload, signature) {
      if (signature === "") return false;
      const expected = mac(payload);
      const given = Buffer.from(signature, "base64url");
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

export function createCursorCodec(secret: Buffer): CursorCodec {
  return cursorCodec(hmacCursorSigner(secret));
}
