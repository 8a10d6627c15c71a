/** Seeded randomness: the same `--seed` gives the same ids, texts and timings, run after run. */
export { seededRandom } from "@acs-toolkit/schema/examples";

/** A 32-bit seed derived from a seed and a label (FNV-1a), so that streams of randomness are independent. */
export function deriveSeed(seed: number, label: string): number {
  let hash = (0x811c9dc5 ^ (seed >>> 0)) >>> 0;
  for (let i = 0; i < label.length; i++) {
    hash ^= label.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** A UUID v4 (hyphenated, lower case) drawn from `random`. */
export function randomUuid(random: () => number): string {
  let hex = "";
  for (let i = 0; i < 4; i++) hex += Math.floor(random() * 0x100000000).toString(16).padStart(8, "0");
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** An element of `list` drawn from `random`. */
export function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)]!;
}
