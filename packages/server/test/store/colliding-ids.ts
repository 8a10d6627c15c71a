/** Event ids whose hashes collide, for the store's collision paths (not a test file itself). */
import { idHash } from "../../src/store/sqlite/index.js";

/**
 * `pairs` pairs of distinct ids `<prefix>-<n>` with equal idHash, found by a birthday search
 * (~80,000 hashes per pair for a 32-bit hash); deterministic.
 */
export function collidingIdPairs(pairs: number, prefix = "collide"): [string, string][] {
  const seen = new Map<number, string>();
  const found: [string, string][] = [];
  for (let n = 0; found.length < pairs; n++) {
    const id = `${prefix}-${n}`;
    const hash = idHash(id);
    const earlier = seen.get(hash);
    if (earlier === undefined) seen.set(hash, id);
    else {
      found.push([earlier, id]);
      seen.delete(hash);
    }
  }
  return found;
}
