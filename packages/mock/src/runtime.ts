/**
 * What makes the world move: a scripted agent (the `ConversationRuntime` the server's conversation
 * service drives) and the scenario streamer. Both record events through a recorder: in Node the
 * server's own `ConversationService.record`, so every event is validated, stored and pushed to live
 * subscribers exactly as on the reference server; in the browser the core of that service
 * (`ConversationCore` of `@acs-toolkit/server/core`, browser/world.ts).
 */
import type { ConversationLifecycleStatus, Event, MessageEvent } from "@acs-toolkit/schema";
// Values from the server's browser-safe entry only: the browser entry (msw-browser.ts) runs this module too.
import { eventTimeMicros, recordedTimestamp, type ConversationRecord, type EventStore } from "@acs-toolkit/server/store";
import type { ConversationRuntime, RuntimeContext } from "@acs-toolkit/server";
import { deriveSeed, randomUuid, seededRandom } from "./random.js";
import { exampleAction, exampleObservation, text, toolNameFor } from "./scenarios/builder.js";
import type { Scenario } from "./scenarios/types.js";

/** How fast time passes: a factor (1 = the recorded pace, 10 = ten times faster) or instant. */
export type Speed = number | "instant";

/** Longest pause between two streamed events at speed 1 (recordings can hold hours of idle time). */
export const MAX_GAP_MS = 5_000;

/** Timers that are all cancelled when the mock closes. */
export class Scheduler {
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private closed = false;

  /** Runs `task` after `ms` (at once, in a later tick, for 0); errors go to `onError`. */
  after(ms: number, task: () => void | Promise<void>, onError: (error: unknown) => void): void {
    if (this.closed) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.closed) return;
      Promise.resolve()
        .then(task)
        .catch(onError);
    }, Math.max(0, ms));
    this.timers.add(timer);
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}

/** Where the runtime reports a failure (pino's `warn` in Node, the console in a browser). */
export interface RuntimeLog {
  warn(details: object, message: string): void;
}

/** What records events into a conversation: validated, stored, pushed to live subscribers. */
export interface EventRecorder {
  record(conversationId: string, events: readonly Event[]): Promise<unknown>;
}

const delayFor = (ms: number, speed: Speed) => (speed === "instant" ? 0 : Math.min(ms, MAX_GAP_MS) / speed);

/** The text of a user message, as one line for a command. */
function messageText(message: MessageEvent): string {
  const parts = (message.llm_message.content ?? []).flatMap((c) => (c.type === "text" ? [c.text] : []));
  return parts.join(" ").trim() || "(no text)";
}

export interface ScriptedAgentOptions {
  seed: number;
  speed: Speed;
  scheduler: Scheduler;
  log: RuntimeLog;
}

/**
 * The mock's agent. A new conversation starts STARTING and moves to RUNNING; every user message that
 * runs the agent (the initial one, one sent over the live channel, one sent to `POST …/events` with
 * `run: true`) gets a scripted turn: an action, its observation and a reply, paced by the speed
 * factor. Ids come from the seed.
 */
export class ScriptedAgent implements ConversationRuntime {
  readonly initialStatus: ConversationLifecycleStatus = "STARTING";
  private readonly random = new Map<string, () => number>();
  /** Each conversation's last turn (played or waiting): a turn starts when the one before it has ended, as the agent server runs one at a time. */
  private readonly turns = new Map<string, Promise<void>>();
  /** Set by the world once the store exists. */
  store?: EventStore;

  constructor(private readonly options: ScriptedAgentOptions) {}

  private randomFor(conversationId: string): () => number {
    let random = this.random.get(conversationId);
    if (!random) this.random.set(conversationId, (random = seededRandom(deriveSeed(this.options.seed, `agent:${conversationId}`))));
    return random;
  }

  private fail = (error: unknown) => this.options.log.warn({ err: error }, "scripted agent could not record its turn");

  start(conversation: ConversationRecord, context: RuntimeContext): void {
    const { scheduler, speed } = this.options;
    // Read now: a message sent before the conversation is RUNNING gets its own turn, not this one.
    const created = conversation.eventCount;
    scheduler.after(delayFor(300, speed), async () => {
      await context.setStatus("RUNNING");
      if (created === 0) return;
      // The initial user message (if any) is the last event the conversation was created with.
      const last = (await this.store?.readAfter(conversation.id, created - 1, 1))?.[0];
      const event = last ? (JSON.parse(last.json) as Event) : undefined;
      if (event?.kind === "MessageEvent" && event.source === "user") this.onUserMessage(conversation, event, context, { run: true });
    }, this.fail);
  }

  /**
   * A turn for a message that runs the agent: one over the live channel, or over HTTP with
   * `run: true` (as on the agent server; one sent with `run` false or absent is only recorded).
   */
  onUserMessage(conversation: ConversationRecord, message: MessageEvent, context: RuntimeContext, { run }: { run: boolean }): void {
    if (!run) return;
    const random = this.randomFor(conversation.id);
    const said = messageText(message);
    const command = `echo ${JSON.stringify(said.split("\n")[0]!.slice(0, 80))}`;
    const callId = `call_${randomUuid(random).replace(/-/g, "").slice(0, 24)}`;
    const actionId = randomUuid(random);
    const ids = [randomUuid(random), randomUuid(random), randomUuid(random), randomUuid(random), randomUuid(random)] as const;
    const steps: Array<[delayMs: number, build: () => Event]> = [
      [600, () => ({ id: ids[0], timestamp: recordedTimestamp(), source: "environment", key: "execution_status", value: "running", kind: "ConversationStateUpdateEvent" }) as Event],
      [
        900,
        () => ({
          id: actionId,
          timestamp: recordedTimestamp(),
          source: "agent",
          thought: [text("Let me repeat that back in the terminal.")],
          thinking_blocks: [],
          action: { ...exampleAction("TerminalAction"), command },
          tool_name: toolNameFor("TerminalAction"),
          tool_call_id: callId,
          tool_call: { id: callId, name: "terminal", arguments: JSON.stringify({ command, is_input: false, reset: false }), origin: "completion" },
          llm_response_id: `chatcmpl-mock-${ids[1].slice(0, 8)}`,
          security_risk: "LOW",
          summary: "Echo the message",
          kind: "ActionEvent",
        }) as Event,
      ],
      [
        500,
        () => {
          const observation = exampleObservation("TerminalObservation");
          observation.content = [text(said)];
          observation.command = command;
          observation.exit_code = 0;
          return { id: ids[2], timestamp: recordedTimestamp(), source: "environment", tool_name: "terminal", tool_call_id: callId, observation, action_id: actionId, kind: "ObservationEvent" } as Event;
        },
      ],
      [
        700,
        () =>
          ({
            id: ids[3],
            timestamp: recordedTimestamp(),
            source: "agent",
            llm_message: { role: "assistant", content: [text(`You said: "${said}". I am the mock's scripted agent: every message gets an action, its observation and this reply.`)], thinking_blocks: [] },
            llm_response_id: `chatcmpl-mock-${ids[3].slice(0, 8)}`,
            activated_skills: [],
            extended_content: [],
            sender: null,
            critic_result: null,
            kind: "MessageEvent",
          }) as Event,
      ],
      [100, () => ({ id: ids[4], timestamp: recordedTimestamp(), source: "environment", key: "execution_status", value: "finished", kind: "ConversationStateUpdateEvent" }) as Event],
    ];
    const previous = this.turns.get(conversation.id) ?? Promise.resolve();
    const turn = previous.then(() => this.play(steps, context));
    this.turns.set(conversation.id, turn);
    void turn.finally(() => {
      if (this.turns.get(conversation.id) === turn) this.turns.delete(conversation.id);
    });
  }

  /** Records a turn's events, each after its delay; resolves once the last one is recorded (or failed). */
  private play(steps: ReadonlyArray<[delayMs: number, build: () => Event]>, context: RuntimeContext): Promise<void> {
    const { scheduler, speed } = this.options;
    const batches = speed === "instant" ? [[0, steps.map(([, build]) => build)] as const] : steps.map(([delay, build]) => [delayFor(delay, speed), [build]] as const);
    return new Promise<void>((resolve) => {
      const next = (index: number) => {
        const batch = batches[index];
        if (!batch) return resolve();
        const [delay, builds] = batch;
        scheduler.after(
          delay,
          async () => {
            await context.record(builds.map((build) => build()));
            next(index + 1);
          },
          (error) => {
            this.fail(error);
            resolve();
          },
        );
      };
      next(0);
    });
  }
}

export interface ScenarioStreamerOptions {
  store: EventStore;
  conversations: EventRecorder;
  speed: Speed;
  scheduler: Scheduler;
  log: RuntimeLog;
}

/**
 * Creates each scenario's conversation with its history and streams the rest, paced by the gaps
 * between the events' timestamps (each gap at most {@link MAX_GAP_MS}) divided by the speed, from
 * the moment the first live client subscribes (or at once with {@link ScenarioStreamer.startAll}).
 */
export class ScenarioStreamer {
  private readonly pending = new Map<string, { scenario: Scenario; next: number }>();

  constructor(private readonly options: ScenarioStreamerOptions) {}

  /**
   * Stores the scenario's conversation: everything at once with speed `instant`, else its history
   * (at its recorded times, `--start`). What streams after takes the time it is delivered, so a
   * message sent while a scenario streams sorts among its events in search as it arrived live.
   */
  async add(scenario: Scenario): Promise<void> {
    const { store, speed } = this.options;
    const preload = speed === "instant" ? scenario.events.length : Math.min(scenario.preload, scenario.events.length);
    const done = preload === scenario.events.length;
    // Pending from the call on (before the store answers): a subscriber may come first.
    if (!done) this.pending.set(scenario.conversationId, { scenario, next: preload });
    await store.createConversation(
      { id: scenario.conversationId, status: done ? (scenario.finalStatus ?? "RUNNING") : "RUNNING" },
      scenario.events.slice(0, preload).map((event) => ({ event, json: JSON.stringify(event) })),
    );
  }

  /** Starts streaming a conversation that has not started yet (a no-op otherwise). */
  start(conversationId: string): void {
    const entry = this.pending.get(conversationId);
    if (!entry) return;
    this.pending.delete(conversationId);
    this.step(entry.scenario, entry.next);
  }

  startAll(): void {
    for (const id of [...this.pending.keys()]) this.start(id);
  }

  /** Conversations still waiting for a subscriber. */
  get waiting(): string[] {
    return [...this.pending.keys()];
  }

  private step(scenario: Scenario, index: number): void {
    const { conversations, scheduler, speed, log, store } = this.options;
    const event = scenario.events[index];
    if (!event) {
      // The scenario's own events tell the story of its status (a ConversationErrorEvent, state
      // updates); the record follows without adding an event of its own.
      if (scenario.finalStatus && scenario.finalStatus !== "RUNNING") {
        store.setStatus(scenario.conversationId, scenario.finalStatus).catch((error: unknown) => log.warn({ err: error, scenario: scenario.name }, "scenario's final status not stored"));
      }
      return;
    }
    const previous = scenario.events[index - 1];
    const gapMs = previous ? Math.max(0, ((eventTimeMicros(event.timestamp) ?? 0) - (eventTimeMicros(previous.timestamp) ?? 0)) / 1000) : 0;
    scheduler.after(
      delayFor(gapMs, speed),
      async () => {
        await conversations.record(scenario.conversationId, [{ ...event, timestamp: recordedTimestamp() } as Event]);
        this.step(scenario, index + 1); // after it is stored: events go in in order
      },
      (error) => log.warn({ err: error, scenario: scenario.name }, "scenario stream stopped"),
    );
  }
}
