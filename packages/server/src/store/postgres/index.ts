/**
 * The PostgreSQL EventStore (`pg` client), one job per module:
 * - open.ts: options, pool settings and opening (migrations.ts creates and upgrades the schema
 *   at open, under an advisory lock); driver.ts: `pg` loaded by the first open;
 * - store.ts: PostgresEventStore, the contract: writes, staged imports, reads;
 * - connection.ts: transactions and which failures mean "unavailable"; analyze-schedule.ts: the
 *   instance's own ANALYZEs;
 * - append-sql.ts: the one-statement append and a batch's INSERT; batch-rows.ts: rows as statement
 *   parameters, and what they add to their conversation; event-ids.ts: the id uniqueness check;
 *   restamp.ts: events stamped at recording, moved after the conversation's latest;
 * - copy-encoding.ts: binary COPY; batch-copy.ts: a batch written by COPY; batch-stream.ts: a
 *   streamed batch's chunks;
 * - import-staging.ts: staged creation; conversation-row.ts: a conversations row as a record;
 * - search.ts: pages and counts; search-sql.ts: their WHERE clauses.
 * - fenced-store.ts: an agent's writes fenced by its conversation's lease; leases.ts and
 *   agent-commands.ts: the leases and the controls handed to their owner; listener.ts: a LISTEN
 *   connection that comes back.
 */
export { PostgresEventStore, NOTIFY_CHANNEL } from "./store.js";
export { openPostgresStore, type PostgresStoreOptions } from "./open.js";
export { FencedPostgresStore } from "./fenced-store.js";
export { migratePostgres, PG_MIGRATIONS } from "./migrations.js";
