/**
 * Writes a long, valid, realistic trajectory as JSONL: the shapes of the recorded corpus and of
 * the spec's examples (every action and observation variant), in the order a real conversation
 * has them — a system prompt, user messages, rounds of action then observation (now and then an
 * agent error or a user rejection instead), agent replies, state updates, and condensations that
 * forget earlier events. Ids are random UUIDs, tool call ids look like OpenAI's and Anthropic's,
 * timestamps move forward by 1 ms to 3 s without a zone offset (as the reference records them),
 * and observation outputs have a long-tailed size (most under 1 kB, some tens of kB).
 */
import { once } from "node:events";
import { createWriteStream, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { exampleEvents, seededRandom } from "@acs-toolkit/schema/examples";

const corpusDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../fixtures/openhands-recorded");

type Json = Record<string, any>;

const WORDS = (
  "the of and to in is it that for on with as was at by this be from or are an not have error file test line " +
  "function return const import export npm run build pass fail src index ts js json node module cannot find " +
  "expected received undefined null true false at Object.<anonymous> TypeError warning done ok total ms"
).split(" ");

interface GeneratedTrajectory {
  bytes: number;
  events: number;
}

/** What else bounds or changes the trajectory. */
interface GeneratorOptions {
  /** Stop after this many events, even short of `targetBytes`. */
  maxEvents?: number;
  /** Changes each event before it is written (`index` is its position, from 0): to plant errors. */
  edit?: (event: Json, index: number) => void;
}

/**
 * Writes about `targetBytes` of JSONL to `file` (it stops at the first event past the target), or
 * exactly `options.maxEvents` events when they come first.
 */
export async function writeRealisticTrajectory(file: string, targetBytes: number, seed = 7, options: GeneratorOptions = {}): Promise<GeneratedTrajectory> {
  const maxEvents = options.maxEvents ?? Infinity;
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const hex = (n: number) => {
    let out = "";
    for (let i = 0; i < n; i++) out += "0123456789abcdef"[Math.floor(random() * 16)];
    return out;
  };
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${"89ab"[Math.floor(random() * 4)]}${hex(3)}-${hex(12)}`;
  const alnum = (n: number) => {
    const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let out = "";
    for (let i = 0; i < n; i++) out += chars[Math.floor(random() * chars.length)];
    return out;
  };
  const callId = () => (random() < 0.5 ? `call_${alnum(24)}` : `toolu_01${alnum(22)}`);
  const words = (count: number) => {
    const out: string[] = [];
    for (let i = 0; i < count; i++) out.push(random() < 0.08 ? `${pick(WORDS)}\n` : pick(WORDS));
    return out.join(" ");
  };
  /** Long-tailed output size: median about 400 characters, now and then tens of kB. */
  const outputSize = () => Math.min(60_000, Math.floor(60 * Math.exp(random() * random() * 9)));

  const corpus = (name: string): Json => JSON.parse(readFileSync(path.join(corpusDir, name), "utf8"));
  const examples = exampleEvents() as Json[];
  const byId = new Map(examples.map((e) => [e.id, e]));
  // (action, observation) pairs of every variant: the spec's examples, and the recorded ones.
  const pairs: [Json, Json][] = examples.filter((e) => e.kind === "ObservationEvent").map((o) => [byId.get(o.action_id)!, o]);
  pairs.push([corpus("ActionEvent_TerminalAction_2026-02-05.json"), corpus("ObservationEvent_TerminalObservation_2026-02-05.json")]);
  pairs.push([corpus("ActionEvent_TerminalAction_2026-02-05.json"), corpus("ObservationEvent_TerminalObservation_2026-02-05.json")]);
  const systemPrompt = corpus("SystemPromptEvent_2026-02-05.json");
  const userMessage = corpus("MessageEvent_user_2026-02-05.json");
  const agentMessage = corpus("MessageEvent_agent_2026-02-05.json");
  const template = (kind: string) => examples.find((e) => e.kind === kind)!;
  const agentError = template("AgentErrorEvent");
  const rejection = template("UserRejectObservation");
  const stateUpdate = template("ConversationStateUpdateEvent");
  const condensation = template("Condensation");

  const out = createWriteStream(file, { highWaterMark: 4 * 1024 * 1024 });
  let buffered: string[] = [];
  let bufferedLength = 0;
  let bytes = 0;
  let events = 0;
  let time = Date.UTC(2026, 1, 5, 11, 24, 45) * 1000; // microseconds
  const recentIds: string[] = [];

  const more = () => bytes < targetBytes && events < maxEvents;
  const emit = async (event: Json) => {
    if (events >= maxEvents) return;
    event.id ??= uuid();
    time += 1000 + Math.floor(random() * 3_000_000);
    const date = new Date(Math.floor(time / 1000)).toISOString().slice(0, 19);
    event.timestamp = `${date}.${String(time % 1_000_000).padStart(6, "0")}`;
    options.edit?.(event, events);
    const line = `${JSON.stringify(event)}\n`;
    buffered.push(line);
    bufferedLength += line.length;
    bytes += Buffer.byteLength(line);
    events++;
    if (recentIds.length >= 64) recentIds.shift();
    recentIds.push(event.id);
    if (bufferedLength >= 4 * 1024 * 1024) {
      if (!out.write(buffered.join(""))) await once(out, "drain");
      buffered = [];
      bufferedLength = 0;
    }
  };

  await emit({ ...structuredClone(systemPrompt), id: uuid() });
  let sinceCondensation = 0;
  while (more()) {
    const user = structuredClone(userMessage);
    user.id = uuid();
    user.llm_message.content = [{ type: "text", text: words(5 + Math.floor(random() * 60)) }];
    await emit(user);
    const rounds = 1 + Math.floor(random() * 12);
    for (let round = 0; round < rounds && more(); round++) {
      const [actionTemplate, observationTemplate] = pick(pairs);
      const call = callId();
      const action = structuredClone(actionTemplate);
      action.id = uuid();
      action.tool_call_id = call;
      action.tool_call = { ...action.tool_call, id: call };
      action.llm_response_id = `chatcmpl-${alnum(29)}`;
      action.thought = [{ type: "text", text: words(3 + Math.floor(random() * 40)) }];
      await emit(action);
      const roll = random();
      if (roll < 0.02) {
        await emit({ ...structuredClone(agentError), id: uuid(), tool_name: action.tool_name, tool_call_id: call, error: words(12) });
      } else if (roll < 0.03) {
        await emit({ ...structuredClone(rejection), id: uuid(), tool_name: action.tool_name, tool_call_id: call, action_id: action.id });
      } else {
        const observation = structuredClone(observationTemplate);
        observation.id = uuid();
        observation.tool_name = action.tool_name;
        observation.tool_call_id = call;
        observation.action_id = action.id;
        observation.observation.content = [{ cache_prompt: false, type: "text", text: words(Math.max(1, Math.floor(outputSize() / 6))) }];
        await emit(observation);
      }
      if (random() < 0.1) await emit({ ...structuredClone(stateUpdate), id: uuid(), key: "execution_status", value: pick(["running", "idle", "finished"]) });
      sinceCondensation += 2;
    }
    const reply = structuredClone(agentMessage);
    reply.id = uuid();
    reply.llm_response_id = `chatcmpl-${alnum(29)}`;
    reply.llm_message.content = [{ type: "text", text: words(10 + Math.floor(random() * 120)) }];
    await emit(reply);
    if (sinceCondensation > 200) {
      sinceCondensation = 0;
      const forgotten = recentIds.slice(0, 20);
      await emit({ ...structuredClone(condensation), id: uuid(), forgotten_event_ids: forgotten, summary: words(40), llm_response_id: `chatcmpl-${alnum(29)}` });
    }
  }
  if (buffered.length) out.write(buffered.join(""));
  out.end();
  await once(out, "close");
  return { bytes, events };
}
