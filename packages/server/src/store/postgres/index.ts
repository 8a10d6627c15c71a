/**
 * The PostgreSQL EventStore (`pg` client): store.ts implements the contract, migrations.ts
 * creates and upgrades the schema at open (under an advisory lock).
 */
export { openPostgresStore, PostgresEventStore, NOTIFY_CHANNEL, type PostgresStoreOptions } from "./store.js";
export { migratePostgres, PG_MIGRATIONS } from "./migrations.js";
