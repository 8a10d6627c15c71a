/**
 * The PostgreSQL EventStore (`pg` client): store.ts implements the contract, migrations.ts
 * creates and upgrades the schema at open (under an advisory lock).
 */
export { openPostgresStore, PostgresEventStore, likeSubstring, poolConfig, NOTIFY_CHANNEL, type PostgresStoreOptions } from "./store.js";
export { migratePostgres, PG_MIGRATIONS, type PgMigration } from "./migrations.js";
