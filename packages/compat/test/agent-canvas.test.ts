/**
 * OpenHands' own web UI, `@openhands/agent-canvas` (pinned 1.16.0, from npm, unchanged), in headless
 * Chromium against the reference server and against the mock. The UI runs as its launcher runs it:
 * its prebuilt `build/` served by its own `scripts/static-server.mjs`, which proxies `/api`,
 * `/sockets`, `/server_info` and `/health` to the backend and injects the session key into the page.
 *
 * Every call the UI makes through that proxy (HTTP and WebSocket) is recorded; a failing test lists
 * the failing ones (method, path and query, status, start of the body). Each test's page is kept as
 * a screenshot in artifacts/agent-canvas/<backend>-<n>.png, pass or fail.
 *
 * Chromium: ACS_CHROMIUM, else CHROMIUM_PATH, else /usr/bin/chromium.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ScriptedLlmServer } from "@acs-toolkit/agent/test-kit";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const packageDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`));
const binOf = (name: string) => {
  const dir = packageDir(name);
  const bin = (require(`${name}/package.json`) as { bin: Record<string, string> }).bin;
  return path.join(dir, Object.values(bin)[0]!);
};
const CANVAS = packageDir("@openhands/agent-canvas");
const CHROMIUM = process.env.ACS_CHROMIUM ?? process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ARTIFACTS = fileURLToPath(new URL("../artifacts/agent-canvas/", import.meta.url));
const RECORDING = fileURLToPath(new URL("../../../fixtures/openhands-recorded/conversation-2026-02-05.jsonl", import.meta.url));
const KEY = "compat-canvas-key-0123456789";
/** How long the UI gets to show something (it is waited on, never slept on). */
const UI_TIMEOUT = 30_000;
/** What the UI calls on the backend: the prefixes the static server proxies. */
const PROXIED = ["/api", "/sockets", "/server_info", "/health"];
/**
 * `/api/automation/*` is OpenHands' automation service (scheduled tasks), a separate service the
 * UI's launcher runs beside the agent server, not part of the agent-conversation API: its calls are
 * listed apart and never count as failures here, nor the error toasts they cause.
 */
const isAutomation = (pathAndQuery: string) => /^\/api\/automation(\/|\?|$)/.test(pathAndQuery);
/** The message New Chat sends, and the reply the scripted LLM gives the server's agent. */
const NEW_CHAT_MESSAGE = "Hello from the agent-canvas compat test";
const LLM_REPLY = "The scripted LLM answers the agent-canvas compat test.";

// ─── the recorded conversation ──────────────────────────────────────────────────────────────────

interface RecordedEvent {
  kind: string;
  source: string;
  llm_message?: { content: Array<{ type: string; text?: string }> };
}

const recording = async (): Promise<RecordedEvent[]> =>
  (await readFile(RECORDING, "utf8"))
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as RecordedEvent);

/** Text as compared with the page: markdown's code marks dropped, white space collapsed. */
const plain = (text: string) => text.replace(/[`*]/g, "").replace(/\s+/g, " ").trim();

/** The text of every user and agent message of the recording, as the page should show it. */
const messageTexts = (events: RecordedEvent[]) =>
  events
    .filter((e) => e.kind === "MessageEvent" && (e.source === "user" || e.source === "agent"))
    .flatMap((e) => e.llm_message!.content.filter((c) => c.type === "text" && c.text).map((c) => plain(c.text!)));

// ─── processes ──────────────────────────────────────────────────────────────────────────────────

/** Every process started here (stopped in afterAll, whatever happened). */
const children: ChildProcess[] = [];

/** Starts a Node script and resolves once its output matches `ready` (with the match). */
function startNode(label: string, args: string[], ready: RegExp, env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  children.push(child);
  return new Promise((resolve, reject) => {
    let output = "";
    const onData = (chunk: Buffer) => {
      output += chunk;
      const match = ready.exec(output);
      if (match) {
        child.stdout!.off("data", onData);
        resolve({ child, match });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (chunk: Buffer) => (output = (output + chunk).slice(-20_000)));
    child.once("exit", (code, signal) => reject(new Error(`${label} exited (${code ?? signal}) before it was ready:\n${output.slice(-2000)}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const forced = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(forced);
}

/** A free loopback port: listened on (port 0) and closed again. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// ─── backends ───────────────────────────────────────────────────────────────────────────────────

interface Backend {
  url: string;
  /** The text of the agent's reply to NEW_CHAT_MESSAGE (or part of it). */
  reply: string;
  /** Conversations the backend holds before the UI starts, besides the recorded one. */
  otherConversations: string[];
  close(): Promise<void>;
}

async function api(backend: Backend, method: string, route: string, json?: unknown): Promise<any> {
  const response = await fetch(new URL(route, backend.url), {
    method,
    headers: { "X-Session-API-Key": KEY, ...(json !== undefined && { "Content-Type": "application/json" }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${route} → ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** The reference server, from its bin, with its agent runtime on a scripted OpenAI-compatible LLM. */
async function startReferenceServer(): Promise<Backend> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "acs-canvas-server-"));
  const llm = await ScriptedLlmServer.start({ fallback: () => ({ text: LLM_REPLY }) });
  const { child, match } = await startNode(
    "the reference server",
    [binOf("@acs-toolkit/server"), "--port", "0", "--data-dir", dataDir, "--log-level", "warn", "--runtime", "agent"],
    /acs-server listening on (http:\/\/\S+)/,
    { SESSION_API_KEY: KEY },
  ).catch(async (error: unknown) => {
    await llm.close();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  });
  const backend: Backend = {
    url: match[1]!,
    reply: LLM_REPLY,
    otherConversations: [],
    async close() {
      await stop(child);
      await llm.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  // The LLM New Chat's agent talks to, configured through the API before the UI opens.
  await api(backend, "POST", "/api/settings", { llm_model: "openai/gpt-4o", llm_api_key: "sk-canvas-compat", llm_base_url: llm.url });
  return backend;
}

/** The mock, from its bin, with its built-in scenarios; its scripted agent answers every message. */
async function startTheMock(): Promise<Backend> {
  const { child, match } = await startNode(
    "the mock",
    [binOf("@acs-toolkit/mock"), "--port", "0", "--key", KEY, "--speed", "10", "--log-level", "warn"],
    /the Agent Conversation Service mock on (http:\/\/\S+)[\s\S]*Ctrl-C stops it\./,
  );
  const backend: Backend = { url: match[1]!, reply: "I am the mock's scripted agent", otherConversations: [], close: () => stop(child) };
  const world = await api(backend, "GET", "/__mock");
  backend.otherConversations = world.scenarios.map((s: { conversation_id: string }) => s.conversation_id);
  // The UI holds New Chat back until an LLM is set up: one is, as a user would (the mock's scripted agent never calls it).
  await api(backend, "POST", "/api/settings", { llm_model: "openai/gpt-4o", llm_api_key: "sk-canvas-compat" });
  return backend;
}

// ─── the UI and what it calls ───────────────────────────────────────────────────────────────────

interface Call {
  test: number;
  method: string;
  /** Path and query. */
  path: string;
  /** HTTP status; 101 for an open WebSocket; 0 when nothing answered. */
  status: number;
  body: string;
  /** The start of the request's body, if any (not reported; for telling calls apart). */
  sent?: string;
  /** A WebSocket still opening: not failed (yet). */
  opening?: boolean;
}

const formatCall = (c: Call) => `${c.method} ${c.path} → ${c.status || "no answer"}${c.body ? `  ${c.body}` : ""}`;
const failed = (c: Call) => !c.opening && (c.status >= 400 || c.status === 0) && !isAutomation(c.path);

/**
 * Calls listed once each (a failing one by its answer too, a successful one by method, path and
 * status), in order of their first time, with how often and in which tests.
 */
function summarize(calls: Call[]): string[] {
  const groups = new Map<string, { line: string; count: number; tests: Set<number> }>();
  for (const call of calls) {
    const key = failed(call) ? formatCall(call) : `${call.method} ${call.path} ${call.status}`;
    const group = groups.get(key) ?? { line: formatCall(call), count: 0, tests: new Set() };
    groups.set(key, group);
    group.count++;
    group.tests.add(call.test);
  }
  return [...groups.values()].map(({ line, count, tests }) => `${line}  (${count > 1 ? `×${count}, ` : ""}test${tests.size > 1 ? "s" : ""} ${[...tests].join(", ")})`);
}
const indent = (lines: string[]) => lines.map((line) => `  ${line}`).join("\n") || "  none";

/** One backend's session: the UI served against it, and everything the UI called. */
class Session {
  readonly calls: Call[] = [];
  readonly errorToasts: string[] = [];
  private listeners = new Set<(call: Call) => void>();
  ui = "";
  private staticServer?: ChildProcess;

  constructor(
    readonly name: "server" | "mock",
    readonly backend: Backend,
  ) {}

  async startUi(): Promise<void> {
    const port = await freePort();
    const { child } = await startNode(
      "agent-canvas's static-server",
      [
        path.join(CANVAS, "scripts/static-server.mjs"),
        ...["--host", "127.0.0.1", "--port", String(port), "--dir", path.join(CANVAS, "build")],
        ...PROXIED.flatMap((prefix) => ["--route", `${prefix}=${this.backend.url}`]),
        ...["--session-api-key", KEY],
      ],
      /Static-server \+ proxy listening on/,
    );
    this.staticServer = child;
    this.ui = `http://127.0.0.1:${port}`;
  }

  async close(): Promise<void> {
    if (this.staticServer) await stop(this.staticServer);
    await this.backend.close();
  }

  private add(call: Call): void {
    this.calls.push(call);
    for (const listener of this.listeners) listener(call);
  }

  /** Resolves with the first failing call that `relevant` picks, from now on. */
  firstFailure(relevant: (call: Call) => boolean): { failure: Promise<Call>; cancel(): void } {
    let listener!: (call: Call) => void;
    const failure = new Promise<Call>((resolve) => {
      listener = (call) => void (failed(call) && relevant(call) && resolve(call));
      this.listeners.add(listener);
    });
    return { failure, cancel: () => this.listeners.delete(listener) };
  }

  /** The failing calls (of test `test`, else of the whole session), once each. */
  failing(test?: number): string[] {
    return summarize(this.calls.filter((c) => failed(c) && (test === undefined || c.test === test)));
  }

  /**
   * The error toasts, but those an automation call explains: the UI tells a failed request as
   * "Request failed with status code S", and one whose status only calls to /api/automation (a
   * separate service, see isAutomation) answered in that test is theirs.
   */
  unexplainedErrorToasts(): string[] {
    return this.errorToasts.filter((toast) => {
      const [, test, status] = /^test (\d+): Request failed with status code (\d+)$/.exec(toast) ?? [];
      if (test === undefined) return true;
      const answered = (automation: boolean) => this.calls.some((c) => c.test === Number(test) && c.status === Number(status) && isAutomation(c.path) === automation);
      return !answered(true) || answered(false);
    });
  }

  /** A fresh page (its own browser context: empty storage) whose calls are recorded as test `n`'s. */
  async page(n: number): Promise<Page> {
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    await page.setViewport({ width: 1400, height: 900 });
    const origin = this.ui;
    page.on("response", (response) => {
      const url = new URL(response.url());
      if (url.origin !== origin || !PROXIED.some((p) => url.pathname === p || url.pathname.startsWith(`${p}/`))) return;
      const request = response.request();
      const call: Call = { test: n, method: request.method(), path: url.pathname + url.search, status: response.status(), body: "", sent: request.postData()?.slice(0, 2000) };
      response.text().then(
        (text) => this.add({ ...call, body: text.replace(/\s+/g, " ").slice(0, 160) }),
        () => this.add(call),
      );
    });
    page.on("requestfailed", (request) => {
      const url = new URL(request.url());
      const error = request.failure()?.errorText ?? "failed";
      // Requests the page itself drops (a navigation, a reload) are not the backend's.
      if (url.origin !== origin || error === "net::ERR_ABORTED" || !PROXIED.some((p) => url.pathname.startsWith(p))) return;
      this.add({ test: n, method: request.method(), path: url.pathname + url.search, status: 0, body: error });
    });
    // WebSockets, from the DevTools protocol: opened, answered (101 or an error status), failed.
    const cdp = await page.createCDPSession();
    const sockets = new Map<string, Call>();
    cdp.on("Network.webSocketCreated", ({ requestId, url }) => {
      const parsed = new URL(url);
      if (parsed.host !== new URL(origin).host) return;
      const call: Call = { test: n, method: "WS", path: (parsed.pathname + parsed.search).replace(/(session_api_key=)[^&]*/, "$1…"), status: 0, body: "", opening: true };
      sockets.set(requestId, call);
      this.add(call);
    });
    cdp.on("Network.webSocketHandshakeResponseReceived", ({ requestId, response }) => {
      const call = sockets.get(requestId);
      if (call) Object.assign(call, { status: response.status, opening: false });
    });
    cdp.on("Network.webSocketFrameError", ({ requestId, errorMessage }) => {
      const call = sockets.get(requestId);
      if (call?.opening) Object.assign(call, { opening: false, body: errorMessage });
    });
    cdp.on("Network.webSocketClosed", ({ requestId }) => {
      const call = sockets.get(requestId);
      if (call?.opening) Object.assign(call, { opening: false, body: "closed before its handshake" });
    });
    await cdp.send("Network.enable");
    // Error toasts (react-hot-toast's role=status, with the UI's error icon), as they appear.
    await page.exposeFunction("__acsErrorToast", (text: string) => void this.errorToasts.push(`test ${n}: ${text.slice(0, 300)}`));
    await page.evaluateOnNewDocument(() => {
      // The first-run onboarding is skipped, as after a user has been through it once.
      localStorage.setItem("openhands-onboarded", "true");
      const seen = new WeakSet<Element>();
      new MutationObserver(() => {
        for (const toast of Array.from(document.querySelectorAll('[role="status"][aria-live]'))) {
          if (seen.has(toast) || !toast.querySelector(".lucide-circle-x")) continue;
          seen.add(toast);
          (window as any).__acsErrorToast(toast.textContent ?? "");
        }
      }).observe(document, { subtree: true, childList: true });
    });
    return page;
  }

  /**
   * Waits until `condition` holds in the page; fails early when a call `relevant` picks fails (the
   * UI then has nothing to show), and in both cases says what it waited for, with the page's text
   * and the failing calls of the test.
   */
  async until(page: Page, n: number, what: string, condition: (arg: any) => boolean, arg: unknown, relevant: (call: Call) => boolean = () => false): Promise<void> {
    const early = this.firstFailure(relevant);
    try {
      const outcome = await Promise.race([
        page.waitForFunction(condition, { timeout: UI_TIMEOUT, polling: "mutation" }, arg).then(
          () => "ok" as const,
          (error: Error) => error,
        ),
        early.failure,
      ]);
      if (outcome === "ok") return;
      const cause = outcome instanceof Error ? `not within ${UI_TIMEOUT / 1000} s` : `${formatCall(outcome)} failed`;
      const text = await page.evaluate(() => document.body?.innerText ?? "").catch(() => "");
      const calls = this.failing(n);
      throw new Error(`${what}: ${cause}.\n\nFailing calls of this test:\n${indent(calls)}\n\nPage text:\n${plain(text).slice(0, 2000)}`);
    } finally {
      early.cancel();
    }
  }
}

let browser: Browser;

beforeAll(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-background-networking"],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all(children.map(stop));
}, 60_000);

/** Runs a test's page; its screenshot is kept whatever happens. */
async function withPage(session: Session, n: number, body: (page: Page) => Promise<void>): Promise<void> {
  const page = await session.page(n);
  try {
    await body(page);
  } finally {
    await page.screenshot({ path: path.join(ARTIFACTS, `${session.name}-${n}.png`) }).catch(() => {});
    await page.browserContext().close();
  }
}

/** The label the UI gives a conversation: its title, else "Conversation <first 5 of its id>". */
async function labelOf(backend: Backend, id: string): Promise<string> {
  const info = await api(backend, "GET", `/api/conversations/${id}`);
  return info.title?.trim() ? info.title : `Conversation ${id.slice(0, 5)}`;
}

/**
 * Answers the open consent window: declines ("Send anonymous usage data" unchecked), confirms, and
 * waits for it to close (early if saving the answer fails).
 */
async function answerConsent(session: Session, page: Page, n: number): Promise<void> {
  await page.click('[data-testid="telemetry-consent-form"] input[name="analytics"]');
  await page.click('[data-testid="confirm-telemetry-preferences"]');
  const savesConsent = (c: Call) => c.path.startsWith("/api/settings") && c.method !== "GET" && !!c.sent?.includes("user_consents_to_analytics");
  await session.until(page, n, "the consent window closes once answered", () => !document.querySelector('[data-testid="telemetry-consent-form"]'), null, savesConsent);
}

const TIMEOUT = { timeout: 120_000 };

/**
 * Per backend, one UI session; its tests run in this order: the consent window (5) before New Chat
 * (3), since until answered it covers the home page, and 4 last, so that it covers every call of the
 * session. Each test numbers its screenshot after its assertion.
 */
describe.each([
  ["server", startReferenceServer],
  ["mock", startTheMock],
] as const)("agent-canvas %s", (name, start) => {
  let session: Session;
  let recordedId: string;
  let texts: string[];

  beforeAll(async () => {
    session = new Session(name, await start());
    const events = await recording();
    texts = messageTexts(events);
    recordedId = (await api(session.backend, "POST", "/api/conversations", { replay_json: JSON.stringify(events) })).conversation_id;
    await session.startUi();
  }, 60_000);

  afterAll(async () => {
    if (!session) return;
    // Every call the UI made: in full (in order) beside the screenshots, and once each here.
    const automation = session.calls.filter((c) => isAutomation(c.path));
    const agentServer = session.calls.filter((c) => !isAutomation(c.path));
    const full = (calls: Call[]) => calls.map((c) => `[test ${c.test}] ${formatCall(c)}`).join("\n");
    await writeFile(path.join(ARTIFACTS, `${name}-calls.txt`), `${full(agentServer)}\n\n# /api/automation (not the agent server)\n${full(automation)}\n`);
    console.log(
      `agent-canvas against the ${name}: ${agentServer.length} calls (${agentServer.filter(failed).length} failing), once each:\n${indent(summarize(agentServer))}\n` +
        `the automation service's (a separate OpenHands service, not counted): ${automation.length} calls\n${indent(summarize(automation))}`,
    );
    await session.close();
  }, 60_000);

  it("1. a recorded conversation opens with every user and agent message", TIMEOUT, async () => {
    await withPage(session, 1, async (page) => {
      await page.goto(`${session.ui}/conversations/${recordedId}`);
      const own = (c: Call) => c.path.startsWith(`/api/conversations/${recordedId}`) || c.path.startsWith("/api/conversations?ids=");
      await session.until(
        page,
        1,
        `the recorded conversation shows its ${texts.length} user and agent messages`,
        (wanted: string[]) => {
          const text = document.body.innerText.replace(/[`*]/g, "").replace(/\s+/g, " ");
          return wanted.every((t) => text.includes(t));
        },
        texts,
        own,
      );
    });
  });

  it("2. the sidebar lists the conversations", TIMEOUT, async () => {
    const labels = await Promise.all([recordedId, ...session.backend.otherConversations].map((id) => labelOf(session.backend, id)));
    await withPage(session, 2, async (page) => {
      await page.goto(`${session.ui}/`);
      await session.until(
        page,
        2,
        `the sidebar lists ${labels.map((l) => JSON.stringify(l)).join(", ")}`,
        (wanted: string[]) => {
          const titles = Array.from(document.querySelectorAll('[data-testid="conversation-card-title"]')).map((e) => (e as HTMLElement).innerText.trim());
          return wanted.every((w) => titles.includes(w));
        },
        labels,
        (c) => c.path.startsWith("/api/conversations/search") || c.path.startsWith("/api/conversations?"),
      );
    });
  });

  it("5. the analytics consent window can be answered and does not come back after a reload", TIMEOUT, async () => {
    await withPage(session, 5, async (page) => {
      await page.goto(`${session.ui}/`);
      const readSettings = (c: Call) => c.method === "GET" && c.path.startsWith("/api/settings");
      await session.until(page, 5, `the consent window ("Help improve OpenHands") shows`, () => !!document.querySelector('[data-testid="telemetry-consent-form"]'), null, readSettings);
      await answerConsent(session, page, 5);
      // After a reload, once the settings are read again and the home page's chat box shows (the
      // window would cover it), it is not there. Not "network idle": the mock's page keeps polling.
      const reread = page.waitForResponse((r) => r.request().method() === "GET" && new URL(r.url()).pathname === "/api/settings", { timeout: UI_TIMEOUT });
      await page.reload();
      expect((await reread).status(), "GET /api/settings after the reload").toBe(200);
      await page.waitForSelector('[data-testid="chat-input"]', { visible: true, timeout: UI_TIMEOUT });
      expect(await page.$('[data-testid="telemetry-consent-form"]'), "the consent window came back after a reload").toBeNull();
    });
  });

  it("3. New Chat: a message typed on the home page starts a conversation and the agent answers", TIMEOUT, async () => {
    await withPage(session, 3, async (page) => {
      await page.goto(`${session.ui}/`);
      await page.waitForSelector('[data-testid="chat-input"]', { visible: true, timeout: UI_TIMEOUT });
      // Once the page is quiet (settings read), the consent window, if it shows, is answered first: it covers the page.
      await page.waitForNetworkIdle({ idleTime: 500, timeout: UI_TIMEOUT });
      if (await page.$('[data-testid="telemetry-consent-form"]')) {
        await answerConsent(session, page, 3).catch((error: Error) => {
          throw new Error(`New Chat is blocked: the consent window covers the home page and cannot be answered (see test 5).\n${error.message}`);
        });
      }
      await page.click('[data-testid="chat-input"]');
      await page.keyboard.type(NEW_CHAT_MESSAGE);
      await session.until(page, 3, "New Chat: the Send button is enabled once a message is typed", () => !!document.querySelector('[data-testid="submit-button"]:not([disabled])'), null);
      const before = session.calls.length;
      const created = page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/api/conversations", { timeout: UI_TIMEOUT });
      await page.click('[data-testid="submit-button"]');
      const response = await created.catch(() => null);
      const afterSend = () => indent(summarize(session.calls.slice(before)));
      expect(response, `New Chat: the UI did not POST /api/conversations within ${UI_TIMEOUT / 1000} s of Send. Its calls after Send:\n${afterSend()}\nError toasts: ${JSON.stringify(session.errorToasts.filter((t) => t.startsWith("test 3")))}`).not.toBeNull();
      const sent = (() => {
        try {
          return Object.keys(JSON.parse(response!.request().postData() ?? "{}")).join(", ");
        } catch {
          return "(not JSON)";
        }
      })();
      const answer = response!.status() < 400 ? "" : `${response!.status()} ${(await response!.text().catch(() => "")).slice(0, 600)}`;
      expect(answer, `New Chat: POST /api/conversations failed (the UI sent: ${sent})`).toBe("");
      await session.until(
        page,
        3,
        `New Chat: the page shows the message sent and the agent's reply (${JSON.stringify(session.backend.reply)})`,
        ([message, reply]: string[]) => document.body.innerText.includes(message!) && document.body.innerText.includes(reply!),
        [NEW_CHAT_MESSAGE, session.backend.reply],
        (c) => c.path.startsWith("/api/conversations") || c.path.startsWith("/sockets/"),
      );
    });
  });

  it("4. over the whole session: no failing call, no error toast, the backend and the conversation connected", TIMEOUT, async () => {
    await withPage(session, 4, async (page) => {
      await page.goto(`${session.ui}/conversations/${recordedId}`);
      // Settled: the backend's status dot (bottom left) no longer "checking", and the page quiet.
      await session.until(
        page,
        4,
        "the backend's connection state is known",
        () => {
          const dot = document.querySelector('[data-testid="backend-status-dot"]');
          return !!dot && dot.getAttribute("data-status") !== "checking";
        },
        null,
      );
      await page.waitForNetworkIdle({ idleTime: 500, timeout: UI_TIMEOUT });
      const status = await page.$eval('[data-testid="backend-status-dot"]', (dot) => dot.getAttribute("data-status"));
      const disconnected = (await page.evaluate(() => document.body.innerText)).split("\n").filter((line) => /\bDisconnected\b/.test(line));
      const socket = session.calls.find((c) => c.test === 4 && c.method === "WS" && c.path.startsWith(`/sockets/events/${recordedId}`));
      expect.soft(session.failing(), "calls to /api (but /api/automation), /sockets, /server_info, /health that failed, in all tests of this backend").toEqual([]);
      expect.soft(session.unexplainedErrorToasts(), "error toasts shown, in all tests of this backend (but those of the automation service's calls)").toEqual([]);
      expect.soft(status, "the backend's status dot (bottom left)").toBe("connected");
      expect.soft(socket ? formatCall(socket) : "none opened", "the conversation's live socket (/sockets/events/{id})").toMatch(/ → 101$/);
      expect.soft(disconnected, "'Disconnected' shown in the page").toEqual([]);
    });
  });
});
