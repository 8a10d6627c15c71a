/**
 * @packageDocumentation
 * The Agent Conversation Service interface as TypeScript: every shape of the spec (the `Event`
 * union and its kinds, the Action / Observation / ToolDefinition unions, content types, settings,
 * requests and responses), the openapi-fetch `paths` type, kind constants and type guards, the
 * table of the Settings fields, the close codes of the live-events channel.
 *
 * Everything here is generated from spec/ by `pnpm generate`; the bundled documents themselves are
 * in `@acs-toolkit/schema/documents` (or the `*.json` subpaths) so this entry stays tiny.
 */
export type * from "./generated/types.js";
export type { paths, components, operations } from "./generated/paths.js";
export * from "./generated/kinds.js";
export * from "./generated/settings.js";
export * from "./generated/live.js";
