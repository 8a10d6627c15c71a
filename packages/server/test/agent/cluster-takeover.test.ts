/**
 * The owner of a conversation's agent going away, with several server processes on one PostgreSQL
 * database: killed mid-step (SIGKILL), another instance takes the agent over once its lease expires,
 * unasked, and the restart rule applies, nothing lost or written twice; stopped (SIGSTOP) until its
 * lease is taken over, then resumed, it writes nothing more and closes its stale agent (fencing),
 * and meanwhile a control handed to it is a 503 with Retry-After; stopped cleanly (SIGTERM), it
 * gives its leases back at once, and concurrent runs through the others start exactly one agent.
 */
import { checkTrajectory } from "@acs-toolkit/agent/test-kit";
import type { Event } from "@acs-toolkit/schema";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { exited } from "../support/process.js";
import { createConversation, kinds, startCluster, userMessage, waitForExecution, type Cluster, type Instance } from "./cluster-support.js";

let c: Cluster;
let b: Instance;
let third: Instance;

beforeAll(async () => {
  c = await startCluster(2);
  [b, third] = c.instances as [Instance, Instance];
  await c.settings();
});
afterAll(() => c?.close());

const terminal = (command: string) => ({ toolCalls: [{ name: "terminal", arguments: { command, timeout: 60 } }] });

/** Every stored event: ids unique, the trajectory valid (no error, no warning). */
function expectValid(events: readonly Event[]): void {
  expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
  const report = checkTrajectory(events);
  expect(report.errors, report.errors.join("\n")).toEqual([]);
  expect(report.warnings, report.warnings.join("\n")).toEqual([]);
}

/** The events a taken-over agent records at its open when its owner died mid-command (the restart rule). */
const RESTART_RULE = ['conversation_status:"STARTING"', 'execution_status:"error"', 'conversation_status:"ERROR"', "AgentErrorEvent"];

describe("the owner of a conversation's agent goes away", () => {
  it("killed mid-step: another instance takes the agent over once its lease expires, unasked; the restart rule applies, nothing lost or twice; run resumes there", async () => {
    const owner = await c.start();
    c.llm.play(terminal("sleep 30"));
    const id = await createConversation(owner, { initial_user_msg: "Sleep" });
    await vi.waitFor(async () => expect(kinds(await c.stored(id))).toContain("ActionEvent"), { timeout: 20_000, interval: 50 });
    const before = await c.stored(id);
    const held = await c.owner(id);

    owner.process.kill("SIGKILL");
    await exited(owner.process);
    // Nobody asks anything: an instance's renewal takes the expired lease and opens the agent.
    await waitForExecution(b, id, "error");
    const taken = await c.owner(id);
    expect(held).not.toBeNull();
    expect(taken).not.toBeNull();
    expect(taken).not.toBe(held);
    const after = await c.stored(id);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(kinds(after.slice(before.length))).toEqual(RESTART_RULE);
    const action = before.find((event) => event.kind === "ActionEvent") as { tool_call_id: string };
    expect(after.at(-1)).toMatchObject({ kind: "AgentErrorEvent", tool_call_id: action.tool_call_id });

    c.llm.play({ text: "Woke up elsewhere." });
    expect((await third.call("POST", `/api/conversations/${id}/run`)).body).toEqual({ success: true });
    await waitForExecution(b, id, "finished");
    expectValid(await c.stored(id));
  });

  it("stopped (SIGSTOP) past its lease: a control meanwhile is a 503; another instance takes over; resumed, the old owner writes nothing more and closes its agent", async () => {
    const owner = await c.start();
    const requests = c.llm.requests.length;
    // The command ends while the owner is stopped: resumed, its agent would record the observation and ask the LLM again.
    c.llm.play(terminal("sleep 2"));
    const id = await createConversation(owner, { initial_user_msg: "Sleep a little" });
    await vi.waitFor(async () => expect(kinds(await c.stored(id))).toContain("ActionEvent"), { timeout: 20_000, interval: 50 });
    owner.process.kill("SIGSTOP");
    expect(kinds(await c.stored(id))).not.toContain("ObservationEvent");

    // Its lease is still live: handed to it, nobody takes the command.
    const pause = await b.call("POST", `/api/conversations/${id}/pause`);
    expect(pause.status, pause.text).toBe(503);
    expect(pause.headers.get("retry-after")).toBe("1");
    expect(pause.body.detail).toMatch(/did not answer within 3000 ms: nothing was done/);

    await waitForExecution(b, id, "error");
    await vi.waitFor(async () => expect(kinds(await c.stored(id)).at(-1)).toBe("AgentErrorEvent"), { timeout: 20_000, interval: 50 });
    const takenOver = await c.stored(id);
    expect(kinds(takenOver).slice(-RESTART_RULE.length)).toEqual(RESTART_RULE);

    owner.process.kill("SIGCONT");
    await vi.waitFor(() => expect(owner.stdout.join("")).toContain("closed the agent of a conversation whose lease another instance holds"), { timeout: 20_000, interval: 50 });
    expect(await c.stored(id)).toEqual(takenOver);
    expect(c.llm.requests.length - requests).toBe(1);
    expect(c.llm.unexpected).toBe(0);

    c.llm.play({ text: "Slept." });
    expect((await b.call("POST", `/api/conversations/${id}/run`)).body).toEqual({ success: true });
    await waitForExecution(third, id, "finished");
    const events = await c.stored(id);
    expect(events.slice(0, takenOver.length)).toEqual(takenOver);
    expectValid(events);
    owner.process.kill("SIGKILL");
    await exited(owner.process);
  });

  it("stopped (SIGSTOP) while the LLM answers: the answer it reads once resumed is refused by the store (fenced), nothing more is written", async () => {
    const owner = await c.start();
    const requests = c.llm.requests.length;
    let open!: () => void;
    const answer = new Promise<void>((resolve) => (open = resolve));
    c.llm.play({ text: "A late answer.", hold: answer });
    const id = await createConversation(owner, { initial_user_msg: "Answer late" });
    await c.llm.waitForRequests(requests + 1);
    owner.process.kill("SIGSTOP");
    await waitForExecution(b, id, "error");
    await vi.waitFor(async () => expect(kinds(await c.stored(id)).at(-1)).toBe('conversation_status:"ERROR"'), { timeout: 20_000, interval: 50 });
    const takenOver = await c.stored(id);
    // The answer goes to the stopped owner's socket: resumed, its agent reads it at once and records it.
    open();
    await new Promise((resolve) => setImmediate(resolve));
    owner.process.kill("SIGCONT");
    await vi.waitFor(() => expect(owner.stdout.join("")).toContain("closed the agent of a conversation whose lease another instance holds"), { timeout: 20_000, interval: 50 });
    expect(kinds(await c.stored(id))).toEqual(kinds(takenOver));
    expect(await c.stored(id)).toEqual(takenOver);
    expect(c.llm.requests.length - requests).toBe(1);
    owner.process.kill("SIGKILL");
    await exited(owner.process);
  });

  it("stopped cleanly (SIGTERM): its leases are free at once; concurrent runs through the others start exactly one agent", async () => {
    // A lease of ten minutes: only its release lets the others take the agent within this test.
    const owner = await c.start(["--lease-ttl-ms", "600000"]);
    const id = await createConversation(owner);
    await vi.waitFor(async () => expect((await owner.call("GET", `/api/conversations/${id}`)).body?.status).toBe("RUNNING"), { timeout: 20_000, interval: 50 });
    expect((await owner.call("POST", `/api/conversations/${id}/events`, { json: userMessage("Run me once") })).status).toBe(200);
    expect(await c.owner(id)).not.toBeNull();
    owner.process.kill("SIGTERM");
    expect(await exited(owner.process)).toBe(0);
    expect(await c.owner(id)).toBeNull();

    let open!: () => void;
    const step = new Promise<void>((resolve) => (open = resolve));
    const requests = c.llm.requests.length;
    c.llm.play({ text: "Ran once.", hold: step });
    const runs = await Promise.all([b, third, b, third, b, third].map((instance) => instance.call("POST", `/api/conversations/${id}/run`)));
    expect(runs.map((run) => run.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    open();
    await waitForExecution(b, id, "finished");
    expect(c.llm.requests.length - requests).toBe(1);
    expectValid(await c.stored(id));
  });
});
