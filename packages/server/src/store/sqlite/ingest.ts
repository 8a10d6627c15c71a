/**
 * Ingest: how a batch of events becomes rows of the SQLite store.
 *
 * A batch is one IMMEDIATE transaction: every event is checked first (timestamp, source), then the
 * events go in INSERT_CHUNK rows per statement, each chunk's id hashes into `event_ids` (whose
 * unique key is the duplicate check, see resolveHeldHashes), then the message texts and their FTS
 * entries, then the conversation's counters. What each choice saves, measured on replay ingest
 * (migrations.ts, version 2, has the details): no FTS trigger (one FTS segment per transaction
 * instead of per message), integer kind and source, a compact id table keyed by a 32-bit hash,
 * multi-row inserts without statement journals, 8 KiB pages, and WAL checkpoints on a worker
 * thread (BackgroundCheckpointer). Replay of a 1M-event conversation went from ~35,000 to
 */
import { DuplicateEventIdError, type StoredEvent } from "../types.js";
import { searchTextOf, type PreparedEvent } from "../prepare.js";
import type { Names } from "./names.js";
import {
  EVENT_ID_PARAMETERS,
  EVENT_PARAMETERS,
  INSERT_CHUNK,
  MAX_SEQ,
  MESSAGE_TEXT_PARAMETERS,
  insertEventIdsSql,
  insertEventsSql,
  insertMessageTextsSql,
  type Statements,
} from "./statements.js";

/**
 * The hash of an event id that `event_ids` is keyed by (see migrations.ts, version 2): FNV-1a
 * with a final mix, as a signed 32-bit integer (4 bytes in a SQLite record); version 1 stored
 * these 32 bits followed by 16 more. Collisions cost a lookup in event_id_collisions: never
 * correctness.
 */
export function idHash(id: string): number {
  let a = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) a = Math.imul(a ^ id.charCodeAt(i), 0x01000193);
  a ^= a >>> 16;
  return a | 0;
}

/** What a write transaction inserts with, and the bytes of event JSON it wrote (for the checkpointer). */
export interface IngestTarget {
  statements: Statements;
  names: Names;
  bytes: number;
}

/** Inside a write transaction: `rows` appended to conversation `conv` from `firstSeq`, returned as stored. */
export function insertRows(target: IngestTarget, conv: number, firstSeq: number, rows: readonly PreparedEvent[], now: string): StoredEvent[] {
  const { statements, names } = target;
  const count = rows.length;
  if (count === 0) return [];
  if (firstSeq + count - 1 > MAX_SEQ) throw new Error("conversation is full (2^32 - 1 events)");
  const stored: StoredEvent[] = new Array(count);
  const kinds: number[] = new Array(count);
  const sources: number[] = new Array(count);
  const hashes: number[] = new Array(count);
  for (let index = 0; index < count; index++) {
    const { id, json, ts, kind, source } = rows[index]!;
    stored[index] = { id, json, ts, seq: firstSeq + index };
    target.bytes += json.length;
    kinds[index] = names.intern(kind);
    sources[index] = names.intern(source);
    hashes[index] = idHash(id);
  }

  for (let from = 0; from < count; from += INSERT_CHUNK) {
    const chunk = Math.min(INSERT_CHUNK, count - from);
    const eventValues: unknown[] = new Array(EVENT_PARAMETERS * chunk);
    const idValues: unknown[] = new Array(EVENT_ID_PARAMETERS * chunk);
    for (let j = 0, p = 0, q = 0; j < chunk; j++, p += EVENT_PARAMETERS, q += EVENT_ID_PARAMETERS) {
      const { id, json, ts, seq } = stored[from + j]!;
      eventValues[p] = eventValues[p + 2] = idValues[q] = conv;
      eventValues[p + 1] = eventValues[p + 3] = idValues[q + 2] = seq;
      eventValues[p + 4] = ts;
      eventValues[p + 5] = id;
      eventValues[p + 6] = kinds[from + j];
      eventValues[p + 7] = sources[from + j];
      eventValues[p + 8] = json;
      idValues[q + 1] = hashes[from + j];
    }
    statements.get(`insertEvents:${chunk}`, () => insertEventsSql(chunk)).run(eventValues);
    const { changes } = statements.get(`insertEventIds:${chunk}`, () => insertEventIdsSql(chunk)).run(idValues);
    if (changes < chunk) resolveHeldHashes(statements, conv, stored, hashes, from, chunk);
  }
  // Message texts INSERT_CHUNK rows per statement, as events (a row per statement was ~8% of a
  // batch's write at 1M events); their FTS entries one per statement: a multi-row insert into
  // message_fts measured 20–35% slower than single rows.
  const texts: Array<{ seq: number; text: string }> = [];
  let textValues: unknown[] = [];
  const flushTexts = () => {
    const n = textValues.length / MESSAGE_TEXT_PARAMETERS;
    if (n > 0) statements.get(`insertMessageTexts:${n}`, () => insertMessageTextsSql(n)).run(textValues);
    textValues = [];
  };
  for (let index = 0; index < count; index++) {
    const text = searchTextOf(rows[index]!);
    if (text === null) continue;
    const { seq, ts } = stored[index]!;
    textValues.push(conv, seq, seq, ts, sources[index], text);
    texts.push({ seq, text });
    if (textValues.length === INSERT_CHUNK * MESSAGE_TEXT_PARAMETERS) flushTexts();
  }
  flushTexts();
  for (const { seq, text } of texts) statements.fixed.indexMessageText.run({ conv, seq, text });
  // The counters (migrations.ts, version 3): one upsert per (kind, source) of the batch.
  const perKind = new Map<number, Map<number, number>>();
  for (let index = 0; index < count; index++) {
    let perSource = perKind.get(kinds[index]!);
    if (!perSource) perKind.set(kinds[index]!, (perSource = new Map()));
    perSource.set(sources[index]!, (perSource.get(sources[index]!) ?? 0) + 1);
  }
  for (const [kind, perSource] of perKind) {
    for (const [source, n] of perSource) statements.fixed.addCounts.run({ conv, kind, source, n });
  }
  // Whether timestamps still never decrease in append order (migrations.ts, version 4).
  let ordered = 1;
  let lastTs = stored[0]!.ts;
  for (let index = 1; index < count; index++) {
    const ts = stored[index]!.ts;
    if (ts < lastTs) ordered = 0;
    else lastTs = ts;
  }
  statements.fixed.advanceConversation.run({ pk: conv, count, now, ordered, firstTs: stored[0]!.ts, lastTs });
  return stored;
}

/**
 * Some events of batch[from, from + rows) did not get their id hash into event_ids: an event
 * stored before (or earlier in the batch) holds it. For each, in batch order: the holder has the
 * same id, or the id is among the collisions already — a duplicate, DuplicateEventIdError (so the
 * first offending event of the batch is the one reported); otherwise the id is a collision and
 * is recorded as one.
 */
function resolveHeldHashes(statements: Statements, conv: number, batch: readonly StoredEvent[], hashes: readonly number[], from: number, rows: number): void {
  for (let index = from; index < from + rows; index++) {
    const { id, seq } = batch[index]!;
    const holder = (statements.fixed.hashHolder.get({ conv, idHash: hashes[index] }) as { seq: number }).seq;
    if (holder === seq) continue;
    const held = (statements.fixed.eventIdAt.get({ conv, seq: holder }) as { id: string }).id;
    if (held === id || statements.fixed.addCollision.run({ conv, id, seq }).changes === 0) throw new DuplicateEventIdError(id, index);
  }
}
