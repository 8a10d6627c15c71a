/**
 * The OpenHands agent server's state of a conversation (spec: AgentConversationState: `id`,
 * `execution_status`, `stats`, …), as `GET /api/conversations/{id}` and the live channel's
 * `full_state` carry it, for conversations that no agent runs here: derived from what each recorded.
 *
 * The state is the last recorded `full_state` value (a replayed WebSocket capture holds some),
 * overlaid by the per-field ConversationStateUpdateEvents recorded after it, over the spec's
 * defaults. A recorded value that does not fit its property's schema is ignored (the value recorded
 * before it stands), so a response always conforms.
 *
 * Cost: the first read of a conversation walks its state updates from the newest back to the last
 * `full_state` (the kind index: state updates only); later reads fold in only the events recorded
 * since (append order). The folded values of the most recently read conversations are kept.
 *
 * Whether a value fits its property is a {@link StateConformance}: the reference server checks it
 * with AJV against the whole schema (recorded-states.ts); without one, {@link shallowConformance} checks
 * the property's JSON type and enum (what a browser can do without compiling schemas at run time).
 */
import type { AgentConversationState, ConversationStats } from "@acs-toolkit/schema";
import { openapiDocument } from "@acs-toolkit/schema/documents";
import type { ConversationRecord, EventStore, Position } from "../store/types.js";
import { nextTask } from "./tasks.js";

/** The schema (under `components/schemas`) whose properties are derived. */
const SCHEMA = "AgentConversationState";
/** Conversations whose folded state is kept. */
const CACHED_CONVERSATIONS = 1024;
/** Events read per step. */
const PAGE = 500;
/** Events read back from the end, at most, for the conversation tree's HEAD (state updates are skipped). */
const LEAF_LOOKBACK = 1000;

type Values = Record<string, unknown>;

interface Folded {
  /** Append order of the last event folded in. */
  seq: number;
  /** Recorded values of the schema's properties (each conforms to its property's schema). */
  values: Values;
  /** The last event after the newest full_state that is not a state update: HEAD of the conversation tree. */
  leaf?: string;
}

interface StateUpdate {
  key: string;
  value: unknown;
}

const isObject = (value: unknown): value is Values => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The ConversationStateUpdateEvent a stored JSON text holds: its key and value; null for one without
 * a key; undefined for any other event (a node of the conversation tree). Parsed only when the text
 * names the kind.
 */
function stateUpdate(json: string): StateUpdate | null | undefined {
  if (!json.includes("ConversationStateUpdateEvent")) return undefined;
  const event = JSON.parse(json) as { kind?: unknown; key?: unknown; value?: unknown };
  if (event.kind !== "ConversationStateUpdateEvent") return undefined;
  return typeof event.key === "string" ? { key: event.key, value: event.value } : null;
}

/**
 * `stats` in its full form: recordings carry the snapshot form (per-field updates have no per-call
 * lists), which becomes the full form with empty lists, as the agent server always sends them.
 */
function fullStats(stats: ConversationStats): ConversationStats {
  const usage = Object.entries(stats.usage_to_metrics ?? {}).map(([id, metrics]) => [
    id,
    { ...metrics, costs: metrics.costs ?? [], response_latencies: metrics.response_latencies ?? [], token_usages: metrics.token_usages ?? [] },
  ]);
  return { ...stats, usage_to_metrics: Object.fromEntries(usage) };
}

/** The properties of the spec's AgentConversationState, as the OpenAPI document declares them. */
const PROPERTIES = (openapiDocument.components as { schemas: Record<string, { properties: Record<string, PropertySchema> }> }).schemas[SCHEMA]!.properties;

interface PropertySchema {
  type?: string | string[];
  enum?: unknown[];
  $ref?: string;
  default?: unknown;
}

/**
 * Whether a recorded value fits the schema of a property of AgentConversationState, named by its
 * path under `components/schemas` (`AgentConversationState/properties/<name>`).
 */
export type StateConformance = (schemaPath: string, value: unknown) => boolean;

const jsonType = (value: unknown): string => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value === "number" ? (Number.isInteger(value) ? "integer" : "number") : typeof value);

/**
 * A {@link StateConformance} that reads the property's schema (through one `$ref`) for its JSON
 * `type` and `enum` only: no nested check, no compiled validator, so it runs anywhere.
 */
export const shallowConformance: StateConformance = (schemaPath, value) => {
  const name = schemaPath.slice(`${SCHEMA}/properties/`.length);
  let schema = PROPERTIES[name];
  if (!schema) return false;
  if (schema.$ref) {
    const target = (openapiDocument.components as { schemas: Record<string, PropertySchema> }).schemas[schema.$ref.replace("#/components/schemas/", "")];
    schema = { ...target, ...schema };
  }
  if (schema.enum && !schema.enum.includes(value)) return false;
  const types = schema.type === undefined ? undefined : Array.isArray(schema.type) ? schema.type : [schema.type];
  if (!types) return true;
  const actual = jsonType(value);
  return types.includes(actual) || (actual === "integer" && types.includes("number"));
};

/** The agent server's state of each conversation, derived from what it recorded (see the module's comment). */
export class ConversationStates {
  /** The properties, and the defaults of those that have one, read from the spec. */
  private readonly fields: ReadonlySet<string>;
  private readonly defaults: Values;
  /** Least recently read first. */
  private readonly folded = new Map<string, Folded>();

  /**
   * @param store where the conversations' events are read
   * @param conforms whether a recorded value fits its property (default {@link shallowConformance})
   */
  constructor(
    private readonly store: Pick<EventStore, "search" | "readAfter">,
    private readonly conforms: StateConformance = shallowConformance,
  ) {
    this.fields = new Set(Object.keys(PROPERTIES));
    this.defaults = Object.fromEntries(Object.entries(PROPERTIES).flatMap(([name, property]) => ("default" in property ? [[name, property.default]] : [])));
  }

  /** The agent server's state of a conversation, derived from its recorded events. */
  async of(record: ConversationRecord): Promise<AgentConversationState> {
    const { values, leaf } = await this.fold(record);
    const state: Values = { ...this.defaults, ...values }; // values are never changed, only replaced
    state.id = record.id; // a recorded full_state names the conversation of the server that wrote it
    // A conversation whose run loop died (ERROR) without recording an execution status is in error.
    if (values.execution_status === undefined && record.status === "ERROR") state.execution_status = "error";
    state.stats = fullStats(state.stats as ConversationStats);
    // HEAD as OpenHands keeps it (conversation/state.py `append_event`): the last event appended that
    // is not a state update. This server never branches; a recorded full_state's HEAD stands until
    // an event follows it.
    state.leaf_event_id = leaf ?? values.leaf_event_id ?? null;
    return state as AgentConversationState;
  }

  private async fold(record: ConversationRecord): Promise<Folded> {
    // Taken out while folding (re-inserted below, most recently read last): a concurrent read of the
    // same conversation scans afresh rather than seeing it half folded.
    let entry = this.folded.get(record.id);
    if (entry) this.folded.delete(record.id);
    else entry = await this.scan(record);
    // Seqs run from 1 without gaps: anything past `entry.seq` was recorded since.
    for (let pages = 0; entry.seq < record.eventCount; pages++) {
      // One page per task: awaiting a store that answers at once (SQLite) never yields.
      if (pages > 0) await nextTask();
      const page = await this.store.readAfter(record.id, entry.seq, PAGE);
      for (const event of page) {
        const update = stateUpdate(event.json);
        if (update) {
          this.apply(entry.values, update);
          if (update.key === "full_state") entry.leaf = undefined;
        } else if (update === undefined) entry.leaf = event.id;
      }
      if (page.length === 0) break;
      entry.seq = page[page.length - 1]!.seq;
    }
    const newer = this.folded.get(record.id);
    if (newer && newer.seq > entry.seq) return entry; // a concurrent read folded further: keep that one
    this.folded.set(record.id, entry);
    if (this.folded.size > CACHED_CONVERSATIONS) this.folded.delete(this.folded.keys().next().value!);
    return entry;
  }

  /** Whether a recorded value is one of a property's: a property of the schema, and a value that fits it. */
  private fits(name: string, value: unknown): boolean {
    return this.fields.has(name) && value !== undefined && this.conforms(`${SCHEMA}/properties/${name}`, value);
  }

  /** A recorded update, in append order: a full_state replaces everything, a field update one value. */
  private apply(values: Values, { key, value }: StateUpdate): void {
    if (key === "full_state") {
      if (!isObject(value)) return;
      for (const name of Object.keys(values)) delete values[name];
      for (const [name, field] of Object.entries(value)) if (this.fits(name, field)) values[name] = field;
    } else if (this.fits(key, value)) values[key] = value;
  }

  /**
   * The values recorded up to the record's last event: its state updates from the newest back, each
   * property's newest value, down to the newest full_state, whose values fill what is left.
   */
  private async scan(record: ConversationRecord): Promise<Folded> {
    return { ...(await this.scanValues(record)), leaf: await this.lastNode(record) };
  }

  /**
   * The last of the record's events that is not a state update, read back from its end (at most
   * {@link LEAF_LOOKBACK} events); none when a full_state comes first (its HEAD stands).
   */
  private async lastNode(record: ConversationRecord): Promise<string | undefined> {
    for (let end = record.eventCount; end > Math.max(0, record.eventCount - LEAF_LOOKBACK); ) {
      const start = Math.max(0, end - 20);
      const page = await this.store.readAfter(record.id, start, end - start);
      for (let index = page.length - 1; index >= 0; index--) {
        const event = page[index]!;
        const update = stateUpdate(event.json);
        if (update === undefined) return event.id;
        if (update?.key === "full_state") return undefined;
      }
      end = start;
      await nextTask(); // one page per task
    }
    return undefined;
  }

  private async scanValues(record: ConversationRecord): Promise<Folded> {
    const values: Values = {};
    let after: Position | undefined;
    for (;;) {
      if (after) await nextTask(); // one page per task
      const page = await this.store.search(record.id, { kind: "ConversationStateUpdateEvent", order: "desc", limit: 100, after });
      for (const event of page.items) {
        if (event.seq > record.eventCount) continue; // recorded after `record` was read: fold() reads it
        const update = stateUpdate(event.json);
        if (!update) continue;
        if (update.key === "full_state" && isObject(update.value)) {
          for (const [name, field] of Object.entries(update.value)) if (!(name in values) && this.fits(name, field)) values[name] = field;
          return { seq: record.eventCount, values };
        }
        if (!(update.key in values) && this.fits(update.key, update.value)) values[update.key] = update.value;
      }
      const last = page.items[page.items.length - 1];
      if (!page.hasMore || !last) return { seq: record.eventCount, values };
      after = { ts: last.ts, seq: last.seq };
    }
  }
}
