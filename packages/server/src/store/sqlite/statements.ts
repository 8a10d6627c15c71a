/**
 * Every SQL statement of the SQLite store: the fixed ones (prepared once per connection, class
 * Statements) and the shapes of the search statements, built per combination of filters and order
 * and kept once prepared. How a page becomes a range of an index: paging.ts; the body search's
 * statements: body-search.ts.
 */
import type Database from "better-sqlite3";

/** The id of a conversation being imported: not a UUID, so no request can name it. */
export const STAGING_PREFIX = "~import~";
/** Seqs fill the low 32 bits of an event's key, `(conversation << 32) | seq`. */
export const MAX_SEQ = 2 ** 32 - 1;

const CONVERSATION_COLUMNS =
  "pk, id, status, created_at, updated_at, event_count, repository, selected_branch, git_provider, next_seq, title, tags";

/** Conversations a read may see: not one being imported or deleted (its id then has STAGING_PREFIX). */
const LISTED = `id NOT LIKE '${STAGING_PREFIX}%'`;

export const SQL = {
  insertConversation: `INSERT INTO conversations
      (id, status, created_at, updated_at, event_count, repository, selected_branch, git_provider, next_seq)
    VALUES (:id, :status, :now, :now, 0, :repository, :selectedBranch, :gitProvider, 1)`,
  conversationById: `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE id = ?`,
  conversationPk: "SELECT pk FROM conversations WHERE id = ?",
  /**
   * A batch appended: counts, and whether timestamps still never decrease in append order (the
   * batch's own order is :ordered, its first and newest timestamps :firstTs and :lastTs).
   */
  advanceConversation: `UPDATE conversations
    SET event_count = event_count + :count, next_seq = next_seq + :count, updated_at = :now,
      ts_ordered = ts_ordered AND :ordered AND (last_ts IS NULL OR last_ts <= :firstTs),
      last_ts = max(coalesce(last_ts, :lastTs), :lastTs)
    WHERE pk = :pk`,
  /** Whether the conversation's timestamps never decrease in append order (migrations.ts, version 4). */
  tsOrdered: "SELECT ts_ordered AS ordered FROM conversations WHERE pk = ?",
  /** A batch's events of one (kind, source) added to the counters (migrations.ts, version 3). */
  addCounts: `INSERT INTO event_counts (conversation, kind, source, n) VALUES (:conv, :kind, :source, :n)
    ON CONFLICT (conversation, kind, source) DO UPDATE SET n = n + excluded.n`,
  setStatus: "UPDATE conversations SET status = :status, updated_at = :now WHERE id = :id",
  /** :setTitle and :setTags say whether :title and :tags (a JSON text) replace the stored ones. */
  updateConversation: `UPDATE conversations
    SET title = CASE WHEN :setTitle THEN :title ELSE title END, tags = CASE WHEN :setTags THEN :tags ELSE tags END, updated_at = :now
    WHERE id = :id`,
  /** A deleted conversation is renamed a staged one (invisible to every read), then discarded as one. */
  hideConversation: "UPDATE conversations SET id = :staging WHERE id = :id RETURNING pk",
  countConversations: `SELECT count(*) AS n FROM conversations WHERE ${LISTED}`,
  /** The seq of the event whose id hash is :idHash (see migrations.ts, version 2). */
  hashHolder: "SELECT seq FROM event_ids WHERE conversation = :conv AND id_hash = :idHash",
  eventIdAt: "SELECT event_id AS id FROM events WHERE key = (:conv << 32) | :seq",
  /** No change when the id is there already: a duplicate. */
  addCollision: "INSERT OR IGNORE INTO event_id_collisions (conversation, event_id, seq) VALUES (:conv, :id, :seq)",
  /** In the same transaction as the text (no trigger: see migrations.ts, version 2). */
  /** Two U+0001 after the text: every character begins a trigram (migrations.ts, version 4). */
  indexMessageText: "INSERT INTO message_fts (rowid, text) VALUES ((:conv << 32) | :seq, :text || char(1, 1))",
  /** The indexed trigrams that begin with a body of 1–2 characters, up to :k of them. */
  trigramsFrom: "SELECT term FROM message_fts_terms WHERE term >= :from AND term < :to LIMIT :k",
  /** The first and last seq inside bounds, in a conversation whose timestamps never decrease. */
  firstSeqIn: `SELECT seq FROM events INDEXED BY events_by_time
    WHERE conversation = :conv AND (ts, seq) > (:loTs, :loSeq) AND (ts, seq) < (:hiTs, :hiSeq) ORDER BY ts, seq LIMIT 1`,
  lastSeqIn: `SELECT seq FROM events INDEXED BY events_by_time
    WHERE conversation = :conv AND (ts, seq) > (:loTs, :loSeq) AND (ts, seq) < (:hiTs, :hiSeq) ORDER BY ts DESC, seq DESC LIMIT 1`,
  nameCode: "SELECT code FROM names WHERE name = ?",
  addName: "INSERT INTO names (name) VALUES (?)",
  /** The events at the seqs of :seqs (a JSON array), in no particular order: one statement per page. */
  eventsAt: `SELECT seq, event_id AS id, json FROM events
    WHERE key IN (SELECT (:conv << 32) | value FROM json_each(:seqs))`,
  /** Append order is the key order within a conversation: a range scan of the primary key. */
  readAfter: `SELECT ts, seq, event_id AS id, json FROM events
    WHERE key > ((:conv << 32) | :afterSeq) AND key <= ((:conv << 32) | 4294967295)
    ORDER BY key LIMIT :limit`,
  /** The event holding the id's hash, if it has this id; else the id among the collisions. */
  positionOf: `SELECT e.ts, e.seq
    FROM event_ids AS i JOIN events AS e ON e.key = (i.conversation << 32) | i.seq
    WHERE i.conversation = :conv AND i.id_hash = :idHash AND e.event_id = :id
    UNION ALL
    SELECT e.ts, e.seq
    FROM event_id_collisions AS c JOIN events AS e ON e.key = (c.conversation << 32) | c.seq
    WHERE c.conversation = :conv AND c.event_id = :id`,
  getDocument: "SELECT value FROM documents WHERE key = ?",
  putDocument: `INSERT INTO documents (key, value) VALUES (:key, :value)
    ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
  ping: "SELECT 1 AS ok",
  renameConversation: "UPDATE conversations SET id = :id, created_at = :now, updated_at = :now WHERE pk = :pk",
  stagedConversations: `SELECT pk FROM conversations WHERE id LIKE '${STAGING_PREFIX}%'`,
  /** Removing a staged conversation, a window of seqs at a time. */
  discardFts: "DELETE FROM message_fts WHERE rowid >= (:conv << 32) | :from AND rowid < (:conv << 32) | :to",
  discardTexts: "DELETE FROM message_texts WHERE key >= (:conv << 32) | :from AND key < (:conv << 32) | :to",
  discardEvents: "DELETE FROM events WHERE key >= (:conv << 32) | :from AND key < (:conv << 32) | :to",
  discardIds: `DELETE FROM event_ids WHERE conversation = :conv AND id_hash IN
    (SELECT id_hash FROM event_ids WHERE conversation = :conv LIMIT :n)`,
  discardCollisions: "DELETE FROM event_id_collisions WHERE conversation = :conv",
  /** A staged conversation's counters: gone with its first discard step (nobody can read them). */
  discardCounts: "DELETE FROM event_counts WHERE conversation = :conv",
  discardConversation: "DELETE FROM conversations WHERE pk = :conv",
  stagedNextSeq: "SELECT next_seq FROM conversations WHERE pk = :conv",
  setNextSeq: "UPDATE conversations SET next_seq = :seq WHERE pk = :conv",
  /** Body: how many FTS candidates this conversation has, counting no further than :k. */
  probe: `SELECT count(*) AS n FROM (
    SELECT rowid FROM message_fts
    WHERE message_fts MATCH :match AND rowid BETWEEN (:conv << 32) AND ((:conv << 32) | 4294967295)
    LIMIT :k)`,
} as const;

/**
 * Events are inserted INSERT_CHUNK rows per statement: per-statement work (binding setup, the
 * result object, VDBE start) is paid once per chunk (+35% replay ingest against one row per
 * statement; 16 to 200 rows measure the same). It takes both `OR FAIL` and the deferred foreign
 * keys (migrations.ts, version 2) to keep a multi-row insert free of a statement journal (with
 * either alone, each statement opens one); any failure still rolls the whole transaction back.
 */
export const INSERT_CHUNK = 64;

/**
 * `rows` events; per row the parameters conversation, seq, ts, event_id, kind, source, json.
 * (Anonymous parameters: better-sqlite3 binds an array only to those.)
 */
export function insertEventsSql(rows: number): string {
  const values = new Array<string>(rows).fill("((? << 32) | ?, ?, ?, ?, ?, ?, ?, ?)").join(", ");
  return `INSERT OR FAIL INTO events (key, conversation, seq, ts, event_id, kind, source, json) VALUES ${values}`;
}
export const EVENT_PARAMETERS = 9;

/**
 * `rows` id hashes; per row the parameters conversation, id_hash, seq. A hash already held is
 * skipped (`changes` says how many went in): see resolveHeldHashes in ingest.ts.
 */
export function insertEventIdsSql(rows: number): string {
  return `INSERT OR IGNORE INTO event_ids (conversation, id_hash, seq) VALUES ${new Array<string>(rows).fill("(?, ?, ?)").join(", ")}`;
}
export const EVENT_ID_PARAMETERS = 3;

/**
 * `rows` message texts; per row the parameters conversation, seq, seq, ts, source, text (OR FAIL
 * and the deferred foreign key: no statement journal, as for events).
 */
export function insertMessageTextsSql(rows: number): string {
  const values = new Array<string>(rows).fill("((? << 32) | ?, ?, ?, ?, ?)").join(", ");
  return `INSERT OR FAIL INTO message_texts (key, seq, ts, source, text) VALUES ${values}`;
}
export const MESSAGE_TEXT_PARAMETERS = 6;

export type Order = "asc" | "desc";

/**
 * A page of conversations by `column` (created_at or updated_at) then id, in `order`, from the
 * position (:key, :id) inclusive when `from`: a range of conversations_by_created or _by_updated.
 */
export function listConversationsSql(column: "created_at" | "updated_at", order: Order, from: boolean): string {
  const dir = order === "asc" ? "ASC" : "DESC";
  const start = from ? ` AND (${column}, id) ${order === "asc" ? ">=" : "<="} (:key, :id)` : "";
  return `SELECT ${CONVERSATION_COLUMNS} FROM conversations INDEXED BY conversations_by_${column === "created_at" ? "created" : "updated"}
    WHERE ${LISTED}${start} ORDER BY ${column} ${dir}, id ${dir} LIMIT :n`;
}

/** The bounds every search and count statement takes; see "Order and paging". */
const RANGE = "(ts, seq) > (:loTs, :loSeq) AND (ts, seq) < (:hiTs, :hiSeq)";
const E_RANGE = "(e.ts, e.seq) > (:loTs, :loSeq) AND (e.ts, e.seq) < (:hiTs, :hiSeq)";
const M_RANGE = "(m.ts, m.seq) > (:loTs, :loSeq) AND (m.ts, m.seq) < (:hiTs, :hiSeq)";

function orderBy(order: Order, prefix = ""): string {
  const dir = order === "asc" ? "ASC" : "DESC";
  return `ORDER BY ${prefix}ts ${dir}, ${prefix}seq ${dir}`;
}

function eventIndex(kind: boolean, source: boolean): string {
  if (kind && source) return "events_by_kind_source";
  if (kind) return "events_by_kind";
  if (source) return "events_by_source";
  return "events_by_time";
}

function equalities(kind: boolean, source: boolean, prefix = ""): string {
  return (kind ? ` AND ${prefix}kind = :kind` : "") + (source ? ` AND ${prefix}source = :source` : "");
}

export const SEARCH_SQL = {
  /** A page without a body filter: `limit + 1` rows of one index range. */
  page: (kind: boolean, source: boolean, order: Order) =>
    `SELECT seq, ts, event_id AS id, json FROM events INDEXED BY ${eventIndex(kind, source)}
    WHERE conversation = :conv${equalities(kind, source)} AND ${RANGE}
    ${orderBy(order)} LIMIT :n`,
  /**
   * The page of `page` as one row: its size, its positions and its JSON texts joined by `,` as a
   * BLOB (one buffer, no string per event). Aggregates see the rows in the order the LIMITed
   * subquery yields them, which SQLite does not promise: searchJson checks the positions' order
   * and, if they are not in it, runs pageJsonSorted, whose order is promised.
   */
  pageJson: (kind: boolean, source: boolean, order: Order) =>
    `SELECT count(*) AS n, group_concat(ts) AS ts, group_concat(seq) AS seq, CAST(group_concat(json, ',') AS BLOB) AS json
    FROM (SELECT ts, seq, json FROM events INDEXED BY ${eventIndex(kind, source)}
      WHERE conversation = :conv${equalities(kind, source)} AND ${RANGE}
      ${orderBy(order)} LIMIT :n)`,
  /** pageJson with the order stated in each aggregate (a sort of the page: about 3 times slower). */
  pageJsonSorted: (kind: boolean, source: boolean, order: Order) =>
    `SELECT count(*) AS n, group_concat(ts, ',' ${orderBy(order)}) AS ts, group_concat(seq, ',' ${orderBy(order)}) AS seq,
      CAST(group_concat(json, ',' ${orderBy(order)}) AS BLOB) AS json
    FROM (SELECT ts, seq, json FROM events INDEXED BY ${eventIndex(kind, source)}
      WHERE conversation = :conv${equalities(kind, source)} AND ${RANGE}
      ${orderBy(order)} LIMIT :n)`,
  /** Whether anything matches in the bounds (hasMore of a pageJson page). */
  any: (kind: boolean, source: boolean) =>
    `SELECT 1 AS one FROM events INDEXED BY ${eventIndex(kind, source)}
    WHERE conversation = :conv${equalities(kind, source)} AND ${RANGE} LIMIT 1`,
  count: (kind: boolean, source: boolean) =>
    `SELECT count(*) AS n FROM events INDEXED BY ${eventIndex(kind, source)}
    WHERE conversation = :conv${equalities(kind, source)} AND ${RANGE}`,
  /** No body, no time range: the counters' rows of the conversation (a few), not its events. */
  counted: (kind: boolean, source: boolean) =>
    `SELECT coalesce(sum(n), 0) AS n FROM event_counts
    WHERE conversation = :conv${equalities(kind, source)}`,
  /** Body, walk: the conversation's messages in order, each tested (index + text only). */
  walk: (source: boolean, order: Order) =>
    `SELECT e.seq, e.ts, instr(m.text, :needle) > 0 AS hit
    FROM events AS e INDEXED BY ${eventIndex(true, source)} JOIN message_texts AS m ON m.key = e.key
    WHERE e.conversation = :conv AND e.kind = :messageKind${equalities(false, source, "e.")} AND ${E_RANGE}
    ${orderBy(order, "e.")}`,
  walkCount: (source: boolean) =>
    `SELECT count(*) AS n
    FROM events AS e INDEXED BY ${eventIndex(true, source)} JOIN message_texts AS m ON m.key = e.key
    WHERE e.conversation = :conv AND e.kind = :messageKind${equalities(false, source, "e.")} AND ${E_RANGE}
      AND instr(m.text, :needle) > 0`,
  /**
   * Body, from FTS in append order (a conversation whose timestamps never decrease, where that is
   * search order): the candidates between two seqs, each tested, read until the page is full.
   */
  ftsOrdered: (source: boolean, order: Order) =>
    `SELECT m.seq, m.ts, instr(m.text, :needle) > 0${source ? " AND m.source = :source" : ""} AS hit
    FROM message_fts AS f JOIN message_texts AS m ON m.key = f.rowid
    WHERE message_fts MATCH :match AND f.rowid BETWEEN (:conv << 32) | :fromSeq AND (:conv << 32) | :toSeq
    ORDER BY f.rowid ${order === "asc" ? "ASC" : "DESC"}`,
  /** Body, from FTS: the candidates of this conversation (rowid range), confirmed, sorted. */
  fts: (source: boolean, order: Order) =>
    `SELECT m.seq, m.ts
    FROM message_fts AS f JOIN message_texts AS m ON m.key = f.rowid
    WHERE message_fts MATCH :match AND f.rowid BETWEEN (:conv << 32) AND ((:conv << 32) | 4294967295)
      ${equalities(false, source, "m.")} AND ${M_RANGE} AND instr(m.text, :needle) > 0
    ${orderBy(order, "m.")} LIMIT :n`,
  ftsCount: (source: boolean) =>
    `SELECT count(*) AS n
    FROM message_fts AS f JOIN message_texts AS m ON m.key = f.rowid
    WHERE message_fts MATCH :match AND f.rowid BETWEEN (:conv << 32) AND ((:conv << 32) | 4294967295)
      ${equalities(false, source, "m.")} AND ${M_RANGE} AND instr(m.text, :needle) > 0`,
} as const;

/** A connection's statements: the fixed ones, prepared at once, and the others on first use. */
export class Statements {
  readonly fixed: { [K in keyof typeof SQL]: Database.Statement };
  private readonly cache = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {
    this.fixed = Object.fromEntries(Object.entries(SQL).map(([k, sql]) => [k, db.prepare(sql)])) as typeof this.fixed;
  }

  /** The statement `sql()` under `key`, prepared on first use and kept. */
  get(key: string, sql: () => string): Database.Statement {
    let s = this.cache.get(key);
    if (!s) {
      s = this.db.prepare(sql());
      this.cache.set(key, s);
    }
    return s;
  }
}
