/**
 * The agent runtime on three server processes sharing one PostgreSQL database and one data
 * directory: a conversation's agent runs on the instance that created it (A), and everything sent
 * to the others reaches that agent, never a second one — a message with `run` and every control
 * (the owner's answer comes back, errors included), concurrent runs through every instance, an
 * upload, and the full_state the owner publishes, which live clients of the other instances get.
 */
import { request } from "node:http";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { checkTrajectory } from "@acs-toolkit/agent/test-kit";
import type { Event } from "@acs-toolkit/schema";
import { connectLive, livePath, type LivePeer } from "@acs-toolkit/test-kit/live";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { KEY } from "../support/harness.js";
import { adminQuery } from "../support/postgres.js";
import { BOUNDARY, MULTIPART_TYPE } from "../uploads/harness.js";
import { createConversation, kinds, reopens, startCluster, userMessage, waitForExecution, type Cluster, type Instance } from "./cluster-support.js";

let c: Cluster;
let a: Instance;
let b: Instance;
let third: Instance;
const peers: LivePeer[] = [];

beforeAll(async () => {
  c = await startCluster(3);
  [a, b, third] = c.instances as [Instance, Instance, Instance];
  await c.settings(b);
});
afterAll(async () => {
  for (const peer of peers) peer.ws.terminate();
  await c?.close();
});

/** A gate a scripted LLM reply waits for. */
function gate(): { hold: Promise<void>; open: () => void } {
  let open!: () => void;
  const hold = new Promise<void>((resolve) => (open = resolve));
  return { hold, open };
}

/**
 * Waits until the request `sent` reached the agent: an instance has taken the command handed to it
 * and not answered yet (the owner works on it), or the request was answered already.
 */
async function reachedAgent(sent: Promise<unknown>): Promise<void> {
  let answered = false;
  void sent.finally(() => (answered = true)).catch(() => undefined);
  const taken = async () => (await adminQuery<{ n: number }>("select count(*)::int as n from acs.agent_commands where claimed", [], c.db.url).catch(() => [{ n: 0 }]))[0]!.n > 0;
  await vi.waitFor(async () => expect(answered || (await taken())).toBe(true), { timeout: 20_000, interval: 20 });
}

/** The conversation is open on its owner (its agent set up: RUNNING). */
async function openOn(instance: Instance, id: string): Promise<void> {
  await vi.waitFor(async () => expect((await instance.call("GET", `/api/conversations/${id}`)).body?.status).toBe("RUNNING"), { timeout: 20_000, interval: 50 });
}

/** The stored trajectory is valid, its ids unique, and no second agent ever opened it. */
async function expectOneAgent(id: string): Promise<Event[]> {
  const events = await c.stored(id);
  const report = checkTrajectory(events);
  expect(report.errors, report.errors.join("\n")).toEqual([]);
  expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
  expect(reopens(events), kinds(events).join("\n")).toBe(0);
  return events;
}

const terminal = (command: string, extra: Record<string, unknown> = {}) => ({ toolCalls: [{ name: "terminal", arguments: { command, ...extra } }] });

describe("a conversation's agent runs on one instance; the others hand it everything", () => {
  it("a message with run through a non-owner while the owner runs reaches the owner's agent: one run after the other, one agent", async () => {
    const step = gate();
    const before = c.llm.requests.length;
    c.llm.play({ text: "First answer.", hold: step.hold }, { text: "Second answer." });
    const id = await createConversation(a, { initial_user_msg: "First" });
    await c.llm.waitForRequests(before + 1); // A's first step is in flight
    const sent = b.call("POST", `/api/conversations/${id}/events`, { json: userMessage("Second", true) });
    await reachedAgent(sent);
    step.open();
    const reply = await sent;
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ kind: "MessageEvent", source: "user", llm_message: { content: [{ type: "text", text: "Second" }] } });
    await vi.waitFor(async () => expect(kinds(await c.stored(id)).filter((kind) => kind === "MessageEvent")).toHaveLength(4), { timeout: 20_000, interval: 50 });
    await waitForExecution(a, id, "finished");
    expect(c.llm.requests.length - before).toBe(2);
    const events = await expectOneAgent(id);
    const texts = events.filter((event) => event.kind === "MessageEvent").map((event) => JSON.stringify((event as { llm_message: unknown }).llm_message));
    expect(texts.map((text) => ["First answer.", "Second answer.", '"First"', '"Second"'].find((needle) => text.includes(needle)))).toEqual(['"First"', "First answer.", '"Second"', "Second answer."]);
  });

  it("run and interrupt through a non-owner reach the owner's run: its 409 comes back, the run is interrupted; run through another resumes it there", async () => {
    const step = gate();
    const before = c.llm.requests.length;
    c.llm.play({ text: "never delivered", hold: step.hold });
    const id = await createConversation(a, { initial_user_msg: "Think" });
    await c.llm.waitForRequests(before + 1);
    const run = await b.call("POST", `/api/conversations/${id}/run`);
    expect(run.status, run.text).toBe(409);
    expect(run.body).toEqual({ detail: "Conversation already running. Wait for completion or pause first." });
    const interrupt = await b.call("POST", `/api/conversations/${id}/interrupt`);
    expect(interrupt.status, interrupt.text).toBe(200);
    expect(interrupt.body).toEqual({ success: true });
    step.open();
    await waitForExecution(b, id, "paused");
    expect(kinds(await c.stored(id))).toContain("InterruptEvent");
    c.llm.play({ text: "Resumed." });
    expect((await third.call("POST", `/api/conversations/${id}/run`)).body).toEqual({ success: true });
    await waitForExecution(third, id, "finished");
    expect(c.llm.requests.length - before).toBe(2);
    const events = await expectOneAgent(id);
    expect(kinds(events).filter((kind) => kind === "MessageEvent")).toHaveLength(2);
  });

  it("pause through a non-owner pauses the owner's run after its step", async () => {
    const step = gate();
    const before = c.llm.requests.length;
    c.llm.play(terminal("echo one"), { ...terminal("echo two"), hold: step.hold });
    const id = await createConversation(a, { initial_user_msg: "Two steps" });
    await c.llm.waitForRequests(before + 2); // the second step's call is in flight
    const paused = b.call("POST", `/api/conversations/${id}/pause`);
    await reachedAgent(paused);
    step.open();
    const reply = await paused;
    expect(reply.status, reply.text).toBe(200);
    await waitForExecution(third, id, "paused");
    const events = await expectOneAgent(id);
    expect(kinds(events).slice(-2)).toEqual(['execution_status:"paused"', "PauseEvent"]);
    expect(kinds(events).filter((kind) => kind === "ObservationEvent")).toHaveLength(2);
    expect(c.llm.requests.length - before).toBe(2);
  });

  it("confirmation_policy, security_analyzer and respond_to_confirmation through a non-owner apply to the owner's agent", async () => {
    const id = await createConversation(a);
    await openOn(a, id);
    expect((await b.call("POST", `/api/conversations/${id}/confirmation_policy`, { json: { policy: { kind: "ConfirmRisky" } } })).body).toEqual({ success: true });
    expect((await third.call("POST", `/api/conversations/${id}/security_analyzer`, { json: { security_analyzer: { kind: "LLMSecurityAnalyzer" } } })).body).toEqual({ success: true });
    const before = c.llm.requests.length;
    // Rated LOW by the analyzer: runs under ConfirmRisky; HIGH waits (both wait when the owner's agent has no analyzer, neither without the policy).
    c.llm.play(terminal("echo low", { security_risk: "LOW" }), terminal("echo high", { security_risk: "HIGH" }));
    expect((await a.call("POST", `/api/conversations/${id}/events`, { json: userMessage("Go", true) })).status).toBe(200);
    await waitForExecution(a, id, "waiting_for_confirmation");
    const waiting = kinds(await c.stored(id));
    expect(waiting.filter((kind) => kind === "ActionEvent")).toHaveLength(2);
    expect(waiting.filter((kind) => kind === "ObservationEvent")).toHaveLength(1);
    c.llm.play({ text: "Both ran." });
    expect((await b.call("POST", `/api/conversations/${id}/events/respond_to_confirmation`, { json: { accept: true } })).body).toEqual({ success: true });
    await waitForExecution(b, id, "finished");
    const events = await expectOneAgent(id);
    expect(kinds(events).filter((kind) => kind === "ObservationEvent")).toHaveLength(2);
    expect(c.llm.requests.length - before).toBe(3);
    expect((await third.call("GET", `/api/conversations/${id}`)).body).toMatchObject({ security_analyzer: { kind: "LLMSecurityAnalyzer" }, confirmation_policy: { kind: "ConfirmRisky" } });
  });

  it("concurrent runs through every instance start exactly one run of one agent; the others get the owner's 409", async () => {
    const id = await createConversation(a);
    await openOn(a, id);
    expect((await b.call("POST", `/api/conversations/${id}/events`, { json: userMessage("Run me once") })).status).toBe(200);
    const step = gate();
    const before = c.llm.requests.length;
    c.llm.play({ text: "Ran once.", hold: step.hold });
    const runs = await Promise.all([a, b, third, a, b, third, b, third].map((instance) => instance.call("POST", `/api/conversations/${id}/run`)));
    expect(runs.map((run) => run.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    for (const run of runs.filter((r) => r.status === 409)) expect(run.body).toEqual({ detail: "Conversation already running. Wait for completion or pause first." });
    step.open();
    await waitForExecution(b, id, "finished");
    expect(c.llm.requests.length - before).toBe(1);
    await expectOneAgent(id);
  });

  it("the owner's full_state reaches a live client of a non-owner", async () => {
    const id = await createConversation(a);
    await openOn(a, id);
    const onB = connectLive(b.url, livePath(id), { headers: { "X-Session-API-Key": KEY } });
    peers.push(onB);
    const fullState = (frame: { value: { key?: string } }) => frame.value.key === "full_state";
    await onB.waitFor(1, fullState); // the first frame, B's own
    // A pause on the owner (an idle agent pauses at once) publishes its full_state there.
    expect((await a.call("POST", `/api/conversations/${id}/pause`)).body).toEqual({ success: true });
    const [, published] = await onB.waitFor(2, fullState);
    expect(published!.value.value).toMatchObject({ conversation_id: id, execution_status: "paused" });
  });
});

/** Starts a multipart upload of `name` through `instance` and sends `head` of its bytes; the rest when `finish` is called. */
function slowUpload(instance: Instance, id: string, name: string, head: Buffer, tail: Buffer): { finish: () => Promise<{ status: number; body: string }> } {
  const upload = request(`${instance.url}/api/conversations/${id}/upload-files`, { method: "POST", headers: { "X-Session-API-Key": KEY, "Content-Type": MULTIPART_TYPE } });
  const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
    upload.on("response", (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += String(chunk)));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    upload.on("error", reject);
  });
  upload.write(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  upload.write(head);
  return {
    finish: async () => {
      upload.end(Buffer.concat([tail, Buffer.from(`\r\n--${BOUNDARY}--\r\n`)]));
      return answered;
    },
  };
}

describe("files on the shared data directory", () => {
  it("an upload through a non-owner is in the owner's agent's workspace and served by every instance; an instance starting meanwhile leaves an upload in progress alone", async () => {
    const id = await createConversation(a);
    await openOn(a, id);
    const form = new FormData();
    form.append("files", new Blob(["kestrel notes 42\n"]), "notes.txt");
    const uploaded = await b.call("POST", `/api/conversations/${id}/upload-files`, { body: form });
    expect(uploaded.status, uploaded.text).toBe(200);

    // An upload in progress through A while another instance starts on the same data directory.
    const head = Buffer.alloc(256 * 1024, 7);
    const tail = Buffer.alloc(64 * 1024, 9);
    const slow = slowUpload(a, id, "big.bin", head, tail);
    const folder = path.join(c.dataDir, "uploads", id);
    await vi.waitFor(async () => expect((await readdir(folder)).filter((name) => name.endsWith(".part"))).toHaveLength(1), { timeout: 10_000, interval: 20 });
    const late = await c.start();
    expect((await readdir(folder)).filter((name) => name.endsWith(".part"))).toHaveLength(1);
    const finished = await slow.finish();
    expect(finished.status, finished.body).toBe(200);
    expect(await readFile(path.join(folder, "big.bin"))).toEqual(Buffer.concat([head, tail]));

    for (const instance of [a, b, third, late]) {
      const response = await fetch(`${instance.url}/api/conversations/${id}/files/notes.txt`, { headers: { "X-Session-API-Key": KEY } });
      expect(await response.text()).toBe("kestrel notes 42\n");
    }
    const before = c.llm.requests.length;
    c.llm.play(terminal("cat notes.txt"), { text: "Read it." });
    expect((await late.call("POST", `/api/conversations/${id}/events`, { json: userMessage("Read notes.txt", true) })).status).toBe(200);
    await waitForExecution(b, id, "finished");
    const events = await expectOneAgent(id);
    const observation = events.find((event) => event.kind === "ObservationEvent");
    expect(JSON.stringify(observation)).toContain("kestrel notes 42");
    expect(c.llm.requests.length - before).toBe(2);
  });
});
