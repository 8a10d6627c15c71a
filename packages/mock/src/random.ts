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

/** Two hex digits of every byte. */
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/** Eight hex digits of a 32-bit number. */
const hex8 = (n: number) => HEX[n >>> 24]! + HEX[(n >>> 16) & 0xff]! + HEX[(n >>> 8) & 0xff]! + HEX[n & 0xff]!;

/**
 * A UUID v4 (hyphenated, lower case) drawn from `random`: four 32-bit draws in hex, the version
 * and variant digits set over theirs (built from a table: the `long` scenario draws ~15,000 at start).
 */
export function randomUuid(random: () => number): string {
  const a = hex8(Math.floor(random() * 0x100000000));
  const b = hex8(Math.floor(random() * 0x100000000));
  const c = hex8(Math.floor(random() * 0x100000000));
  const d = hex8(Math.floor(random() * 0x100000000));
  const variant = "89ab"[parseInt(c[0]!, 16) & 0x3]!;
  return `${a}-${b.slice(0, 4)}-4${b.slice(5, 8)}-${variant}${c.slice(1, 4)}-${c.slice(4)}${d}`;
}

/** An element of `list` drawn from `random`. */
export function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)]!;
}
