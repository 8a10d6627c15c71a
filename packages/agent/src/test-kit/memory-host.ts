/**
 * A host in memory: a test double of the server side of {@link ConversationHost} (never of the
 * agent). It keeps the recorded events in order, the transient events it was asked to publish and
 * the lifecycle statuses, validates every recorded event as the reference server does (strict,
 * except for the two pending additions of `trajectory.ts`), and lets a test wait for an event
 * without sleeping.
 */
import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import type { ConversationLifecycleStatus, UserMessage } from "@acs-toolkit/schema";
import { validateEvent } from "@acs-toolkit/validator";
import type { AgentSettings, ConversationHost } from "../host.js";
import type { StreamingDeltaEvent } from "@acs-toolkit/schema";
import type { RecordedEvent } from "../host.js";

export interface MemoryHostOptions {
  conversationId?: string;
  /** Default: a new temporary directory. */
  workspaceDir?: string;
  settings?: AgentSettings;
  /** Events stored before the runtime opens the conversation (a replay, a restart). */
  events?: readonly RecordedEvent[];
}

export class MemoryHost implements ConversationHost {
  readonly conversationId: string;
  readonly workspaceDir: string;
  /** Every recorded event, in order. */
  readonly events: RecordedEvent[];
  /** Every published transient event, in order. */
  readonly published: StreamingDeltaEvent[] = [];
  /** Every lifecycle status reported, in order. */
  readonly statuses: ConversationLifecycleStatus[] = [];
  /** The `execution_status` at each `stateSettled` call (where the agent server publishes its full_state). */
  readonly settledStatuses: string[] = [];
  /** Recorded events the validator rejected (besides the pending additions), as `kind: message`. */
  readonly rejected: string[] = [];
  /** The settings the runtime reads; change them between runs. */
  currentSettings: AgentSettings;
  /** When set, `record` rejects with it (a store that fails). */
  failRecords: Error | undefined;
  private readonly waiters: Array<{ test: (event: RecordedEvent) => boolean; from: number; resolve: (event: RecordedEvent) => void }> = [];

  constructor(options: MemoryHostOptions = {}) {
    this.conversationId = options.conversationId ?? randomUUID();
    this.workspaceDir = options.workspaceDir ?? realpathSync(mkdtempSync(path.join(tmpdir(), "acs-agent-workspace-")));
    this.currentSettings = options.settings ?? {};
    this.events = [...(options.events ?? [])];
  }

  async record(events: readonly RecordedEvent[]): Promise<void> {
    if (this.failRecords) throw this.failRecords;
    for (const event of events) {
      const result = validateEvent(event, { unknownKinds: "warn", unknownProperties: "warn" });
      if (!result.ok) this.rejected.push(...result.errors.map((issue) => `${event.kind} ${issue.pointer}: ${issue.message}`));
      this.events.push(structuredClone(event));
      for (const waiter of [...this.waiters]) {
        if (this.events.length - 1 >= waiter.from && waiter.test(event)) {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          waiter.resolve(event);
        }
      }
    }
  }

  publish(event: StreamingDeltaEvent): void {
    this.published.push(event);
  }

  async readEvents(): Promise<readonly RecordedEvent[]> {
    return structuredClone(this.events);
  }

  async settings(): Promise<AgentSettings> {
    return structuredClone(this.currentSettings);
  }

  async setStatus(status: ConversationLifecycleStatus): Promise<void> {
    this.statuses.push(status);
  }

  stateSettled(): void {
    this.settledStatuses.push(this.executionStatuses.at(-1) ?? "idle");
  }

  /**
   * The first event recorded from now on (or from index `from`) that passes `test`.
   * @example await host.waitFor((event) => event.kind === "ActionEvent")
   */
  waitFor(test: (event: RecordedEvent) => boolean, from = this.events.length): Promise<RecordedEvent> {
    const found = this.events.slice(from).find(test);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ test, from, resolve }));
  }

  /** The recorded events of one kind. */
  ofKind<K extends RecordedEvent["kind"]>(kind: K): Extract<RecordedEvent, { kind: K }>[] {
    return this.events.filter((event): event is Extract<RecordedEvent, { kind: K }> => event.kind === kind);
  }

  /** The `execution_status` values recorded, in order. */
  get executionStatuses(): string[] {
    return this.events.flatMap((event) => (event.kind === "ConversationStateUpdateEvent" && event.key === "execution_status" ? [String(event.value)] : []));
  }
}

/** A user message with one text part. */
export function userText(text: string): UserMessage {
  return { role: "user", content: [{ cache_prompt: false, type: "text", text }] };
}

/** A promise a test opens when it chooses (to hold a scripted reply). */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
