/**
 * The PostgreSQL store's schema, as numbered migrations applied at open. Several instances may
 * start at once against one database: each takes an advisory lock (per schema) for the whole run,
 * so exactly one applies a migration and the others then see it applied.
 */
import type { Pool } from "pg";

/** One step of the schema; applied in its own transaction, in order, once per schema. */
interface PgMigration {
  version: number;
  description: string;
  sql: string;
}

/** The store's migrations, in order. */
export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    description: "conversations, events, counters, documents",
    sql: `
      -- id is null while a staged import writes it (invisible to every read), then set at once.
      create table conversations (
        pk bigserial primary key,
        id text unique,
        status text not null,
        created_at text not null,
        updated_at text not null,
        event_count bigint not null default 0,
        -- the next append's seq: taken under FOR UPDATE of this row, so appends never interleave
        next_seq bigint not null default 1,
        repository text,
        selected_branch text,
        git_provider text
      );
      create index conversations_staged on conversations (updated_at) where id is null;
      -- json is text, not jsonb: search returns it byte for byte. body is the lower-cased
      -- searchable text of a MessageEvent (null for other kinds).
      create table events (
        conv bigint not null references conversations (pk) on delete cascade,
        seq bigint not null,
        ts bigint not null,
        id text not null,
        kind text not null,
        source text not null,
        body text,
        json text not null,
        primary key (conv, seq),
        unique (conv, id)
      );
      create index events_time on events (conv, ts, seq);
      create index events_kind_time on events (conv, kind, ts, seq);
      create index events_source_time on events (conv, source, ts, seq);
      create index events_body on events using gin (body gin_trgm_ops) where body is not null;
      -- Counts without a scan: one row per (conversation, kind, source), kept by the append.
      create table event_counts (
        conv bigint not null references conversations (pk) on delete cascade,
        kind text not null,
        source text not null,
        n bigint not null,
        primary key (conv, kind, source)
      );
      create table documents (key text primary key, value text not null);
    `,
  },
  {
    version: 2,
    description: "events without a foreign key to conversations",
    // Its check ran once per inserted row (a trigger): 60% of a 100k-event insert. Rows are only
    // written in the transaction that holds their conversation's row (created or FOR UPDATE), and
    // a staged conversation deletes its events before itself, so the key guarded nothing.
    sql: "alter table events drop constraint events_conv_fkey",
  },
  {
    version: 3,
    description: "conversations.ts_ordered and last_ts: time-range counts from two positions",
    // ts_ordered: every event's ts is ≥ the ts of the event before it in seq order (true of every
    // conversation appended live or replayed in order). Then the events with ts ≥ t are the seqs
    // from the first one's on, and a time-range count is a difference of two seqs (two index
    // probes), not a scan of the range. Kept by the append, in its transaction.
    sql: `
      alter table conversations add column last_ts bigint, add column ts_ordered boolean not null default true;
      update conversations c set last_ts = x.last_ts, ts_ordered = x.ordered
      from (
        select conv, max(ts) as last_ts, bool_and(prev is null or ts >= prev) as ordered
        from (select conv, ts, lag(ts) over (partition by conv order by seq) as prev from events) e
        group by conv
      ) x
      where x.conv = c.pk;
    `,
  },
  {
    version: 4,
    description: "events.id, kind and source in the C collation: byte comparisons in their indexes",
    // Only equality is asked of them (an id, a kind, a source), never a linguistic order; under a
    // database's default collation (C.UTF-8, en_US.UTF-8, …) every comparison in the unique (conv, id)
    // index on random ids and in the (conv, kind|source, ts, seq) indexes went through strcoll. In a
    // COPY of 200k events into a table of 200k (psql, this machine): 25,062 → 28,986 and
    // 21,241 → 24,639 rows/s, the whole index set. The indexes on them are rebuilt (the heap is not
    // rewritten: text to text is binary-coercible).
    sql: `alter table events alter column id type text collate "C", alter column kind type text collate "C", alter column source type text collate "C"`,
  },
  {
    version: 5,
    description: "events_body: a GIN pending list of at most 128 kB",
    // With fastupdate (the default) new entries go to the index's pending list, flushed into the
    // index only when it passes gin_pending_list_limit (4 MB by default) or by (auto)vacuum, and
    // every search reads the whole list. After a replay it held 400 pages (1,000 messages): a
    // body search of "kestrel" spent 2.5 ms of its 3.8 ms in the bitmap index scan at 1M events,
    // 0.25 of 0.34 ms at 10k (EXPLAIN ANALYZE, this machine). At 128 kB (≤ 16 pages) the scan took
    // 0.29 ms at 1M, the page (searchJson) 1.85 ms instead of 4.27, and the replay of 1M events ran
    // at 36,415 events/s beside 37,439 with the 4 MB list (05:19–05:20 UTC, load 4.5–5.2).
    sql: "alter index events_body set (gin_pending_list_limit = 128)",
  },
  {
    version: 6,
    description: "event ids unique per conversation by the append, under the conversation's row lock: a hash index on (id, conv) instead of the unique btree",
    // The unique (conv, id) btree on random ids (UUIDs) was the largest per-row cost of an ingest:
    // each insert descends to a random leaf, and past shared_buffers that leaf is read back and
    // written out again (and its first change after a checkpoint is a full-page image in the WAL).
    // Every write of a conversation's events holds the conversation's row (FOR UPDATE, or a row it
    // creates), so the store checks a batch's ids under that lock instead (takenIds, and the
    // one-statement append's own check) and refuses a taken one with DuplicateEventIdError, as the
    // index did. The lookups by id (those checks, positionOf) use a hash index on the id's 64-bit
    // hash seeded by the conversation: 8 bytes an entry, one bucket page a lookup, and the same id
    // in many conversations (one recording replayed into each) lands in different buckets.
    // Measured in bench/DECISIONS.md. A build before this migration relies on the
    // unique index: upgrade every instance of a deployment (their appends are not checked here).
    sql: `
      create index events_conv_id_hash on events using hash (hashtextextended(id, conv));
      alter table events drop constraint events_conv_id_key;
    `,
  },
  {
    version: 7,
    description: "events_message_time: the messages' (conv, ts, seq), for body pages that walk them in order",
    // A body (only MessageEvents have one) found in many messages fills a page in a few hundred of
    // them, walked in order; the other plan, every match from the trigram index sorted, grows with
    // the conversation. Without this index the walk was over every event (events_time: 7,800 rows
    // for a page of "repository", in half the messages, at 1M events: 5-9 ms) or over
    // events_kind_time with kind = 'MessageEvent', where the planner multiplies the two
    // selectivities as if kind and body were independent, estimates 336 matches instead of
    // 14,557 and sorts them all: 128-139 ms. A strict LIKE implies body is not null, so a body
    // filter alone can use this partial index, and its row estimate is the LIKE's own (EXPLAIN
    // ANALYZE at 1M events: 0.8 ms a page; rare terms keep the trigram plan, 0.6 ms).
    sql: "create index events_message_time on events (conv, ts, seq) where body is not null",
  },
  {
    version: 8,
    description: "events_body: the pending list's bound from the connection (128 kB, 4 MB for a replay's COPY), not the index",
    // Migration 5's 128 kB bound made a replay flush the list every ~130 messages: 20 inserts of
    // 10,000 of the bench's events (5,063 messages) took 3.6-4.1 s with it, 2.9-3.1 s with a 4 MB
    // list cleaned (gin_clean_pending_list) at the end of each, 2.3-2.4 s without the index (psql,
    // 2026-11-26 14:35 UTC). An index's storage parameter overrides the setting, so the bound now
    // comes from the store's connections (poolConfig: 128 kB, what searches read at most), and a
    // COPY raises it for its transaction and leaves the list empty (insertRows). An instance of a
    // build before it would write under PostgreSQL's default 4 MB: upgrade every instance together.
    sql: "alter index events_body reset (gin_pending_list_limit)",
  },
  {
    version: 9,
    description: "events_kind_source_time: one index on (conv, the 32-bit hash of kind and source, ts, seq) instead of (conv, kind, ts, seq) and (conv, source, ts, seq)",
    // The two text indexes were the largest per-row cost of a replay after the heap: a row goes to
    // the middle of each (the end of its kind's, its source's run), one descent of text comparisons
    // per index, where the time and primary-key indexes append at their right edge. COPY of the
    // bench's 1M events (100 transactions of 10,000, the index set otherwise this migration's): both
    // text indexes 21.3-24.0 s, one (conv, kind, source, ts, seq) 17.2-19.0 s, this one 14.8-15.8 s,
    // neither 12.1 s (a node client, 2026-11-26 20:30 UTC). A page of one kind or one source walks
    // this index once per (kind, source) pair of the conversation that matches (event_counts holds
    // them), each branch in (ts, seq) order, merged (kindSourcePage); a hash shared by two pairs is
    // caught there and answered without the index.
    sql: `
      create index events_kind_source_time on events (conv, hashtext(kind || ' ' || source), ts, seq);
      drop index events_kind_time;
      drop index events_source_time;
    `,
  },
  {
    version: 10,
    description: "message_texts: the messages' searchable texts in a table of their own, with the trigram and time indexes, instead of events.body",
    // A body page or count tested each candidate message's text on its events row: a walk of
    // events_message_time or a recheck of the trigram bitmap visited one events row per message, and
    // at 1M events those rows are spread over a heap of ~0.6 GB, far past shared_buffers (a page of
    // 2 of a term in 1% of the messages: 0.6-0.8 ms at 10k, 1.5-2.2 ms at 1M). Here a walk or a
    // recheck reads the narrow rows of the messages alone (~2.5% of the events, tens of texts a
    // page), and only the page's own rows are read from events, by primary key (the SQLite store's
    // message_texts, likewise). The texts are the events' own, moved: no text is computed again.
    sql: `
      create table message_texts (
        conv bigint not null,
        seq bigint not null,
        ts bigint not null,
        source text collate "C" not null,
        body text not null
      );
      insert into message_texts (conv, seq, ts, source, body) select conv, seq, ts, source, body from events where body is not null;
      create index message_texts_time on message_texts (conv, ts, seq);
      create index message_texts_body on message_texts using gin (body gin_trgm_ops);
      alter table events drop column body;
    `,
  },
  {
    version: 11,
    description: "conversations.title and tags; the listing's indexes on (created_at, id) and (updated_at, id)",
    // A page of conversations (listConversations) in either order, from any conversation on, is one
    // range of an index. The instants are ISO-8601 texts of one format, compared in the C collation
    // (byte order, as the other stores compare them). tags is a JSON object's text, as in SQLite.
    sql: `
      alter table conversations add column title text, add column tags text;
      create index conversations_created on conversations (created_at collate "C", id collate "C") where id is not null;
      create index conversations_updated on conversations (updated_at collate "C", id collate "C") where id is not null;
    `,
  },
  {
    version: 12,
    description: "agent_leases and agent_commands: one agent per conversation across instances, controls handed to its owner",
    // A lease per conversation whose agent runs somewhere: the instance that holds it (owner, null
    // once released), a generation taken up by every change of hands (the fence an append checks in
    // its transaction), the expiry the owner keeps pushing forward, and whether its agent was open
    // (taken over by another instance once the owner stops renewing). A command is a control or a
    // message an instance hands to the owner; the owner claims it, then writes its answer.
    sql: `
      create table agent_leases (
        conversation_id text primary key,
        owner text,
        generation bigint not null default 1,
        expires_at timestamptz not null,
        open boolean not null default false
      );
      create index agent_leases_owner on agent_leases (owner);
      create index agent_leases_expired on agent_leases (expires_at) where open;
      create table agent_commands (
        id bigserial primary key,
        conversation_id text not null,
        target text not null,
        sender text not null,
        command text not null,
        claimed boolean not null default false,
        answer text,
        created_at timestamptz not null default clock_timestamp()
      );
      create index agent_commands_target on agent_commands (target) where not claimed;
    `,
  },
];

/** A 64-bit advisory lock key (stable across processes): FNV-1a of `acs-migrations:<name>`. */
function lockKey(name: string): string {
  let h = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(`acs-migrations:${name}`)) h = ((h ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return BigInt.asIntN(64, h).toString();
}

/** A quoted SQL identifier. */
export const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Creates `schema` (and the pg_trgm extension) when missing and applies the migrations it lacks,
 * under an advisory lock so that concurrent starts are safe. Returns the versions it applied.
 */
export async function migratePostgres(pool: Pool, schema: string, migrations: readonly PgMigration[] = PG_MIGRATIONS): Promise<number[]> {
  const client = await pool.connect();
  const key = lockKey(schema);
  const s = quoteIdent(schema);
  let broken: Error | undefined;
  const onError = (error: Error) => void (broken = error); // a dying connection's event (the query rejects too)
  client.on("error", onError);
  try {
    // Neither a migration nor the wait for another instance's is bounded by the store's statement
    // timeout (10 s by default): building an index over a large events table takes longer
    // (migration 6: 1.4 s for 1.2M rows here), and an instance starting meanwhile waits for it
    // on the advisory lock. Reset before the connection goes back to the pool.
    await client.query("set statement_timeout = 0");
    await client.query("select pg_advisory_lock($1::bigint)", [key]);
    try {
      // What exists is not created again: CREATE … IF NOT EXISTS checks the privilege to create
      // first, and a role given only the use of a migrated schema (not its owner, no CREATE on the
      // database) would be refused.
      const [exists] = (
        await client.query<{ trgm: boolean; schema: boolean; table: boolean }>(
          `select exists (select from pg_extension where extname = 'pg_trgm') as trgm,
             exists (select from pg_namespace where nspname = $1) as schema,
             to_regclass($2) is not null as table`,
          [schema, `${s}.schema_migrations`],
        )
      ).rows;
      if (!exists!.trgm) {
        // The extension is database-wide: one more lock, shared by every schema, for its creation.
        await client.query("select pg_advisory_lock($1::bigint)", [lockKey("")]);
        try {
          await client.query("create extension if not exists pg_trgm with schema public");
        } finally {
          await client.query("select pg_advisory_unlock($1::bigint)", [lockKey("")]);
        }
      }
      if (!exists!.schema) await client.query(`create schema if not exists ${s}`);
      if (!exists!.table) await client.query(`create table if not exists ${s}.schema_migrations (version integer primary key, description text not null, applied_at timestamptz not null default now())`);
      const done = new Set((await client.query<{ version: number }>(`select version from ${s}.schema_migrations`)).rows.map((r) => r.version));
      const applied: number[] = [];
      for (const m of migrations) {
        if (done.has(m.version)) continue;
        await client.query("begin");
        try {
          await client.query(`set local search_path to ${s}, public`);
          await client.query(m.sql);
          await client.query(`insert into ${s}.schema_migrations (version, description) values ($1, $2)`, [m.version, m.description]);
          await client.query("commit");
        } catch (error) {
          await client.query("rollback").catch(() => undefined);
          throw error;
        }
        applied.push(m.version);
      }
      return applied;
    } finally {
      await client.query("select pg_advisory_unlock($1::bigint)", [key]).catch(() => undefined);
      await client.query("reset statement_timeout").catch((error: unknown) => void (broken = error as Error));
    }
  } catch (error) {
    broken = error as Error;
    throw error;
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}
