/**
 * The bash routes on the mocks: the Node mock (Prism in front of the reference server's API, the
 * server's `ws` channel) and the browser mock's MSW handlers answer POST
 * /api/bash/execute_bash_command and the /sockets/bash-events socket as the reference server does
 * without its agent runtime: the same checks and 422s, each command echoed, and nothing run, which
 * the single BashOutput of each command says (`exit_code` -1).
 */
import { setupServer } from "msw/node";
import { WebSocket as NodeWebSocket } from "ws";
import { connectLive, type Frame } from "@acs-toolkit/test-kit/live";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBrowserMockHandlers } from "../src/msw-browser.js";
import { KEY, startTestMock, type TestMock } from "./support.js";

const EXECUTE = "/api/bash/execute_bash_command";
const kind = (name: string) => (frame: Frame) => frame.value.kind === name;

describe("the Node mock", () => {
  let t: TestMock;
  let workspace: string;
  beforeAll(async () => {
    t = await startTestMock({ scenarios: ["happy"] });
    const { home } = (await t.call("GET", "/api/file/home")).body as { home: string };
    workspace = `${home}/${t.mock.world.scenarios[0]!.conversationId}`;
  });
  afterAll(() => t?.close());

  it("runs no command, and says so in the agent server's shape", async () => {
    const reply = await t.call("POST", EXECUTE, { json: { command: "touch ran", cwd: workspace, timeout: 10 } });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ kind: "BashOutput", order: 0, exit_code: -1, stdout: null, stderr: expect.stringMatching(/^Error executing command: .*the mock runs no commands/) });
    const outside = await t.call("POST", EXECUTE, { json: { command: "true", cwd: "/etc" } });
    expect(outside.body.stderr).toMatch(/is not a folder inside a conversation's workspace/);
  });

  it("refuses bad input with the server's 422s, and a request without the key with 401", async () => {
    for (const [json, loc] of [
      [{ cwd: workspace }, ["body", "command"]],
      [{ command: "true", timeout: 0 }, ["body", "timeout"]],
      [{ command: "true", timeout: 3601 }, ["body", "timeout"]],
      [{ command: "true", cwd: 5 }, ["body", "cwd"]],
    ] as const) {
      const reply = await t.call("POST", EXECUTE, { json });
      expect(reply.status, reply.text).toBe(422);
      expect(reply.body.detail.map((d: { loc: unknown }) => d.loc)).toContainEqual(loc);
    }
    expect((await t.call("POST", EXECUTE, { json: { command: "true" }, key: null })).status).toBe(401);
  });

  it("serves the bash-events socket: an echo per command, its BashOutput, BashError for a bad frame, 4001 without a key", async () => {
    const peer = connectLive(t.url, "/sockets/bash-events");
    await peer.opened;
    peer.send({ type: "auth", session_api_key: KEY });
    peer.send({ command: "git status", cwd: workspace, timeout: 10 });
    peer.send({ command: 7 });
    const [echo] = await peer.waitFor(1, kind("BashCommand"));
    expect(echo!.value).toMatchObject({ command: "git status", cwd: workspace, timeout: 10 });
    const [output] = await peer.waitFor(1, kind("BashOutput"));
    expect(output!.value).toMatchObject({ command_id: echo!.value.id, exit_code: -1, stderr: expect.stringMatching(/the mock runs no commands/) });
    const [error] = await peer.waitFor(1, kind("BashError"));
    expect(error!.value).toMatchObject({ code: "ValidationError", detail: expect.stringMatching(/^command: /) });
    peer.ws.close();
    const stranger = connectLive(t.url, "/sockets/bash-events");
    await stranger.opened;
    stranger.send({ type: "auth", session_api_key: "wrong" });
    expect((await stranger.closed).code).toBe(4001);
  });
});

describe("the browser mock's handlers", () => {
  const BASE = "http://localhost:4010";
  let server: ReturnType<typeof setupServer>;
  let close: () => void;
  beforeAll(async () => {
    // Node 20 has no global WebSocket for MSW's interceptor to replace: ws's stands in (nothing reaches it).
    (globalThis as { WebSocket?: unknown }).WebSocket ??= NodeWebSocket;
    const mock = await createBrowserMockHandlers({ baseUrl: BASE, scenarios: ["happy"] });
    close = mock.close;
    server = setupServer(...mock.handlers);
    server.listen({ onUnhandledRequest: "error" });
  });
  afterAll(() => {
    server?.close();
    close?.();
  });

  it("serve the bash-events socket as the Node mock does", async () => {
    const socket = new WebSocket(`${BASE.replace(/^http/, "ws")}/sockets/bash-events`);
    const frames: Array<{ kind: string; [key: string]: unknown }> = [];
    const got = (count: number) =>
      new Promise<void>((resolve) => {
        const check = () => (frames.length >= count ? resolve() : undefined);
        socket.addEventListener("message", (event) => {
          frames.push(JSON.parse(String(event.data)));
          check();
        });
        check();
      });
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener("open", () => resolve(), { once: true });
      socket.addEventListener("close", () => reject(new Error("no handler took the bash-events socket")), { once: true });
    });
    const two = got(2);
    socket.send(JSON.stringify({ type: "auth", session_api_key: KEY }));
    socket.send(JSON.stringify({ command: "ls", cwd: "/workspace/3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9", timeout: 5 }));
    await two;
    expect(frames.map((frame) => frame.kind)).toEqual(["BashCommand", "BashOutput"]);
    expect(frames[1]).toMatchObject({ command_id: frames[0]!.id, exit_code: -1 });
    socket.close();
  });
});
