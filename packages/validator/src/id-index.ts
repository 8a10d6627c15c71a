/**
 * Memory-lean tables for the sequence rules: every id of a trajectory must be remembered, and a
 * recording of a few GB holds millions. Ids the reference writes (UUIDs, or ULIDs) are packed into
 * 128 bits in typed arrays (off the JavaScript heap, so they do not make the garbage collector
 * grow the heap); other strings go to Maps.
 */

/** V8 refuses to grow one Map past 2^24 entries; a new Map is chained on well before that. */
const MAP_LIMIT = 8_000_000;

/**
 * A string → number map without Map's size limit: entries go into the last of a chain of Maps,
 * lookups try each (one Map until eight million entries, so the usual cost is one lookup).
 */
export class LargeStringMap {
  private readonly maps: Map<string, number>[] = [new Map()];

  get size(): number {
    let size = 0;
    for (const map of this.maps) size += map.size;
    return size;
  }

  get(key: string): number | undefined {
    const maps = this.maps;
    for (let i = maps.length - 1; i >= 0; i--) {
      const value = maps[i]!.get(key);
      if (value !== undefined) return value;
    }
    return undefined;
  }

  set(key: string, value: number): void {
    const maps = this.maps;
    for (let i = 0; i < maps.length - 1; i++) {
      if (maps[i]!.has(key)) {
        maps[i]!.set(key, value);
        return;
      }
    }
    let last = maps[maps.length - 1]!;
    if (last.size >= MAP_LIMIT && !last.has(key)) {
      last = new Map();
      maps.push(last);
    }
    last.set(key, value);
  }

  delete(key: string): void {
    for (const map of this.maps) map.delete(key);
  }
}

const SHARD_BITS = 6;
/** 64 parts of 1,024 slots: 65,536 slots before the first growth (1.3 MB for ids), which most recordings never reach. */
const INITIAL_SHARD_CAPACITY = 1024;

interface Shard {
  slots: Uint32Array;
  capacity: number;
  size: number;
}

/**
 * An open-addressing hash table (linear probing, each part at most 3/4 full) from keys of
 * `keyWords` 32-bit words to a number in [0, 2^32 - 2], in Uint32Arrays: `keyWords + 1` words a
 * slot, the last holding value + 1 (0 marks an empty slot). The table is 64 parts chosen by the
 * hash's top bits, each doubling on its own, so that growing never holds two copies of the whole.
 */
export class WordTable {
  private readonly shards: Shard[];
  private readonly stride: number;
  size = 0;
  /** The key of the next get/add, written by the caller (keeps calls free of allocation). */
  readonly key: Uint32Array;

  /** Keys are 2 or 4 words (a 64-bit hash, a 128-bit id). */
  constructor(private readonly keyWords: 2 | 4) {
    this.stride = keyWords + 1;
    this.key = new Uint32Array(keyWords);
    this.shards = Array.from({ length: 1 << SHARD_BITS }, () => ({
      slots: new Uint32Array(INITIAL_SHARD_CAPACITY * this.stride),
      capacity: INITIAL_SHARD_CAPACITY,
      size: 0,
    }));
  }

  /** The value stored for `key`, or undefined. */
  get(): number | undefined {
    const hash = this.hash(this.key, 0);
    const shard = this.shards[hash >>> (32 - SHARD_BITS)]!;
    const stored = shard.slots[this.find(shard, this.key, 0, hash) * this.stride + this.keyWords]!;
    return stored === 0 ? undefined : stored - 1;
  }

  /** Stores `value` for `key` unless it is there; returns the value stored before, or undefined. */
  add(value: number): number | undefined {
    const hash = this.hash(this.key, 0);
    const shard = this.shards[hash >>> (32 - SHARD_BITS)]!;
    let slot = this.find(shard, this.key, 0, hash);
    const stored = shard.slots[slot * this.stride + this.keyWords]!;
    if (stored !== 0) return stored - 1;
    if ((shard.size + 1) * 4 > shard.capacity * 3) {
      this.grow(shard);
      slot = this.find(shard, this.key, 0, hash);
    }
    const at = slot * this.stride;
    shard.slots.set(this.key, at);
    shard.slots[at + this.keyWords] = value + 1;
    shard.size++;
    this.size++;
    return undefined;
  }

  private hash(words: Uint32Array, from: number): number {
    let h = Math.imul(0x9e3779b9 ^ words[from]!, 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13) ^ words[from + 1]!, 0x85ebca6b);
    if (this.keyWords === 4) {
      h = Math.imul(h ^ (h >>> 13) ^ words[from + 2]!, 0x85ebca6b);
      h = Math.imul(h ^ (h >>> 13) ^ words[from + 3]!, 0x85ebca6b);
    }
    h ^= h >>> 16;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    return h >>> 0;
  }

  /** The slot of `shard` holding `words[from…]`, or the empty slot where it would go. */
  private find(shard: Shard, words: Uint32Array, from: number, hash: number): number {
    const { slots } = shard;
    const keyWords = this.keyWords;
    const stride = this.stride;
    const mask = shard.capacity - 1;
    let slot = hash & mask;
    const w0 = words[from]!;
    const w1 = words[from + 1]!;
    const w2 = keyWords === 4 ? words[from + 2]! : 0;
    const w3 = keyWords === 4 ? words[from + 3]! : 0;
    for (;;) {
      const at = slot * stride;
      if (slots[at + keyWords] === 0) return slot;
      if (slots[at] === w0 && slots[at + 1] === w1 && (keyWords === 2 || (slots[at + 2] === w2 && slots[at + 3] === w3))) return slot;
      slot = (slot + 1) & mask;
    }
  }

  private grow(shard: Shard): void {
    const old = shard.slots;
    const oldCapacity = shard.capacity;
    const stride = this.stride;
    shard.capacity = oldCapacity * 2;
    shard.slots = new Uint32Array(shard.capacity * stride);
    for (let slot = 0; slot < oldCapacity; slot++) {
      const at = slot * stride;
      if (old[at + this.keyWords] === 0) continue;
      const target = this.find(shard, old, at, this.hash(old, at)) * stride;
      shard.slots.set(old.subarray(at, at + stride), target);
    }
  }
}

/** Value of each lowercase hex digit by character code; -1 for any other character. */
const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) HEX[97 + i] = 10 + i;

/** Value of each Crockford base-32 digit (uppercase, as ULIDs are written); -1 for others. */
const BASE32 = new Int8Array(128).fill(-1);
[..."0123456789ABCDEFGHJKMNPQRSTVWXYZ"].forEach((c, i) => (BASE32[c.charCodeAt(0)] = i));

/**
 * Writes a lowercase hyphenated UUID into `key` as four words (its 32 hex digits, 8 a word); false
 * for anything else. One pass over the characters: this runs for every id of a trajectory.
 */
function packUuid(id: string, key: Uint32Array): boolean {
  if (id.length !== 36) return false;
  let word = 0;
  let digits = 0;
  let at = 0;
  for (let i = 0; i < 36; i++) {
    const c = id.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45) return false;
      continue;
    }
    const digit = c < 128 ? HEX[c]! : -1;
    if (digit < 0) return false;
    word = (word << 4) | digit;
    if (++digits === 8) {
      key[at++] = word; // stored as unsigned: the typed array wraps the sign bit
      word = 0;
      digits = 0;
    }
  }
  return true;
}

/** Writes an uppercase ULID (26 base-32 digits, the first ≤ 7: 128 bits) into `key`; false otherwise. */
function packUlid(id: string, key: Uint32Array): boolean {
  if (id.length !== 26) return false;
  key.fill(0);
  let bit = 0; // from the least significant end
  for (let i = 25; i >= 0; i--) {
    const c = id.charCodeAt(i);
    const digit = c < 128 ? BASE32[c]! : -1;
    if (digit < 0 || (i === 0 && digit > 7)) return false;
    const word = bit >>> 5;
    const offset = bit & 31;
    key[word] = key[word]! | (digit << offset);
    if (offset > 27 && word < 3) key[word + 1] = key[word + 1]! | (digit >>> (32 - offset));
    bit += 5;
  }
  return true;
}

/**
 * Event ids → a number (where the event was). A lowercase hyphenated UUID (what the reference
 * records) or an uppercase ULID takes one 20-byte slot of a {@link WordTable}, about 27 bytes an
 * id at the table's average fill, off the JavaScript heap. Any other id (`…-summary`, an
 * uppercase UUID, which differs from its lowercase form as a string) goes to a Map.
 */
export class IdIndex {
  private readonly uuids = new WordTable(4);
  /** Made on the first ULID: most recordings have none. */
  private ulidTable: WordTable | undefined;
  private readonly ulidKey = new Uint32Array(4);
  private readonly others = new LargeStringMap();

  get size(): number {
    return this.uuids.size + (this.ulidTable?.size ?? 0) + this.others.size;
  }

  private get ulids(): WordTable {
    this.ulidTable ??= new WordTable(4);
    return this.ulidTable;
  }

  /** The number stored for `id`, or undefined. */
  get(id: string): number | undefined {
    if (packUuid(id, this.uuids.key)) return this.uuids.get();
    if (packUlid(id, this.ulidKey)) {
      if (!this.ulidTable) return undefined;
      this.ulidTable.key.set(this.ulidKey);
      return this.ulidTable.get();
    }
    return this.others.get(id);
  }

  /** Stores `value` for `id` unless the id is there; returns the number stored before, or undefined. */
  add(id: string, value: number): number | undefined {
    if (packUuid(id, this.uuids.key)) return this.uuids.add(value);
    if (packUlid(id, this.ulidKey)) {
      this.ulids.key.set(this.ulidKey);
      return this.ulids.add(value);
    }
    const existing = this.others.get(id);
    if (existing === undefined) this.others.set(id, value);
    return existing;
  }
}

/**
 * Strings → a number, keeping only a 64-bit hash of each string, off the heap. Two strings can
 * share a hash (about one chance in 10^8 among a million strings), so an answer is "probably":
 * use it only where a wrong answer changes a message, never a verdict.
 */
export class HashedStrings {
  private readonly table = new WordTable(2);

  get(text: string): number | undefined {
    this.hash(text);
    return this.table.get();
  }

  add(text: string, value: number): number | undefined {
    this.hash(text);
    return this.table.add(value);
  }

  /** Two 32-bit hashes of different families (FNV-1a, and a multiply-rotate one). */
  private hash(text: string): void {
    let a = 0x811c9dc5;
    let b = 0x27d4eb2f ^ text.length;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul((b << 5) | (b >>> 27), 0x9e3779b1) ^ c;
    }
    this.table.key[0] = a;
    this.table.key[1] = b;
  }
}
