/** JSON Pointer helpers (RFC 6901). */

function escapeToken(token: string | number): string {
  return String(token).replace(/~/g, "~0").replace(/\//g, "~1");
}

export function unescapeToken(token: string): string {
  return token.replace(/~1/g, "/").replace(/~0/g, "~");
}

/** Appends one token to a pointer. */
export function joinPointer(pointer: string, token: string | number): string {
  return `${pointer}/${escapeToken(token)}`;
}

/** The pointer's tokens, array indexes as numbers (`/items/3/kind` → ["items", 3, "kind"]). */
export function pointerTokens(pointer: string): Array<string | number> {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((token) => (/^(?:0|[1-9]\d*)$/.test(token) ? Number(token) : unescapeToken(token)));
}

/** The value a pointer designates inside `root`, or undefined. Never throws. */
export function resolvePointer(root: unknown, pointer: string): unknown {
  let node = root;
  for (const token of pointerTokens(pointer)) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<string | number, unknown>)[token];
  }
  return node;
}
