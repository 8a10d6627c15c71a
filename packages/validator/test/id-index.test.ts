/** The compact tables behind the sequence rules, checked against a plain Map as the model. */
import { describe, expect, it } from "vitest";
import { seededRandom } from "@acs-toolkit/schema/examples";
import { HashedStrings, IdIndex, LargeStringMap, WordTable } from "../src/id-index.js";

function ids(count: number, seed: number): string[] {
  const next = seededRandom(seed);
  const hex = (n: number) => Array.from({ length: n }, () => "0123456789abcdef"[Math.floor(next() * 16)]).join("");
  const ulid = () => `${Math.floor(next() * 8)}${Array.from({ length: 25 }, () => "0123456789ABCDEFGHJKMNPQRSTVWXYZ"[Math.floor(next() * 32)]).join("")}`;
  return Array.from({ length: count }, (_, i) => {
    const kind = i % 10;
    if (kind < 6) return `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
    if (kind < 8) return ulid();
    if (kind === 8) return `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}-summary`;
    return `custom-${i}`;
  });
}

describe("IdIndex", () => {
  it("answers like a Map for 200,000 mixed ids (UUIDs, ULIDs, others), through every growth", () => {
    const index = new IdIndex();
    const model = new Map<string, number>();
    const all = ids(200_000, 1);
    all.forEach((id, i) => {
      expect(index.add(id, i)).toBe(model.get(id));
      if (!model.has(id)) model.set(id, i);
    });
    expect(index.size).toBe(model.size);
    for (const id of all) expect(index.get(id)).toBe(model.get(id));
    for (const id of ids(20_000, 2)) expect(index.get(id)).toBe(model.get(id));
  });

  it("adding an id twice keeps the first value", () => {
    const index = new IdIndex();
    expect(index.add("00000000-0000-4000-8000-000000000001", 7)).toBeUndefined();
    expect(index.add("00000000-0000-4000-8000-000000000001", 9)).toBe(7);
    expect(index.get("00000000-0000-4000-8000-000000000001")).toBe(7);
  });

  it("tells apart strings that pack alike: case, the nil UUID, a ULID of the same bits", () => {
    const index = new IdIndex();
    const distinct = [
      "00000000-0000-0000-0000-000000000000",
      "00000000-0000-0000-0000-000000000000-summary",
      "00000000000000000000000000",
      "0000000000000000000000000A",
      "ABCDEF00-0000-4000-8000-000000000000",
      "abcdef00-0000-4000-8000-000000000000",
      "7ZZZZZZZZZZZZZZZZZZZZZZZZZ",
      "8ZZZZZZZZZZZZZZZZZZZZZZZZZ",
    ];
    distinct.forEach((id, i) => expect(index.add(id, i)).toBeUndefined());
    distinct.forEach((id, i) => expect(index.get(id)).toBe(i));
    expect(index.get("00000000-0000-0000-0000-000000000001")).toBeUndefined();
  });

  it("stores values up to 2^32 - 2", () => {
    const index = new IdIndex();
    index.add("00000000-0000-4000-8000-000000000001", 2 ** 32 - 2);
    expect(index.get("00000000-0000-4000-8000-000000000001")).toBe(2 ** 32 - 2);
  });
});

describe("WordTable", () => {
  it("keys of two words: every key found again with its value", () => {
    const table = new WordTable(2);
    const next = seededRandom(3);
    const keys = Array.from({ length: 50_000 }, () => [Math.floor(next() * 2 ** 32), Math.floor(next() * 4)] as const);
    const model = new Map<string, number>();
    keys.forEach(([a, b], i) => {
      table.key[0] = a;
      table.key[1] = b;
      expect(table.add(i)).toBe(model.get(`${a}:${b}`));
      if (!model.has(`${a}:${b}`)) model.set(`${a}:${b}`, i);
    });
    for (const [a, b] of keys) {
      table.key[0] = a;
      table.key[1] = b;
      expect(table.get()).toBe(model.get(`${a}:${b}`));
    }
    expect(table.size).toBe(model.size);
  });
});

describe("HashedStrings and LargeStringMap", () => {
  it("HashedStrings finds what was added and not what was not (no collision among 100,000 tool call ids)", () => {
    const hashed = new HashedStrings();
    const calls = Array.from({ length: 100_000 }, (_, i) => `call_${i.toString(36)}`);
    calls.forEach((call, i) => expect(hashed.add(call, i)).toBeUndefined());
    calls.forEach((call, i) => expect(hashed.get(call)).toBe(i));
    for (let i = 100_000; i < 150_000; i++) expect(hashed.get(`call_${i.toString(36)}`)).toBeUndefined();
  });

  it("LargeStringMap sets, gets, overwrites and deletes", () => {
    const map = new LargeStringMap();
    map.set("a", 1);
    map.set("b", 2);
    map.set("a", 3);
    expect([map.get("a"), map.get("b"), map.size]).toEqual([3, 2, 2]);
    map.delete("a");
    expect([map.get("a"), map.size]).toEqual([undefined, 1]);
  });
});
