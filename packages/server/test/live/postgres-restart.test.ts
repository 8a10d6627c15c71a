/**
 * A real PostgreSQL restart under load. The test runs its own cluster (initdb into a temporary
 * directory, pg_ctl on a free port) so that the shared one is never restarted; two server processes
 * use it while writers append over HTTP and a subscriber follows on WebSocket. During `pg_ctl stop`
 * … `start`, requests answer 503 with `detail` (never a hang, never a 500); afterwards everything
 * acknowledged is stored exactly once, no conversation is partial, the subscriber (reconnecting with
 * `after_id` when a server closes it) has every stored event once in append order, and both servers
 * serve again without being restarted themselves.
 *
 * Skipped only when no `initdb` is found (ACS_TEST_PG_BIN, /usr/lib/postgresql/<version>/bin, PATH).
 */
import { execFile } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { randomBytes } from "node:crypto";
import { seededRandom } from "@acs-toolkit/schema/examples";
import { httpCaller, type Reply } from "@acs-toolkit/test-kit/http";
import { randomTrajectory } from "@acs-toolkit/test-kit/trajectory";
import { connectLive, livePath, type LivePeer } from "@acs-toolkit/test-kit/live";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEY } from "../support/harness.js";
import { adminQuery } from "../support/postgres.js";
import { exited, spawnServer, type ServerProcess } from "../support/process.js";

const run = promisify(execFile);

/** The directory holding initdb and pg_ctl, or undefined when there is none. */
function postgresBin(): string | undefined {
  const candidates = [process.env.ACS_TEST_PG_BIN];
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) candidates.push(...readdirSync(root).sort((a, b) => Number(b) - Number(a)).map((v) => path.join(root, v, "bin")));
  candidates.push(...(process.env.PATH ?? "").split(path.delimiter));
  return candidates.find((dir) => dir && existsSync(path.join(dir, "initdb")) && existsSync(path.join(dir, "pg_ctl")));
}

const BIN = postgresBin();
/** initdb refuses to run as root: as root, the cluster belongs to the `postgres` user. */
const AS_ROOT = process.getuid?.() === 0;
/** Events per replay: a creation that is whole or absent after the restart. */
const REPLAY = 300;
const WRITERS = 6;
/** Longest any request may take: longer is a hang. */
const REQUEST_LIMIT_MS = 20_000;

async function pgTool(tool: string, ...args: string[]): Promise<string> {
  const command = path.join(BIN!, tool);
  const { stdout } = AS_ROOT ? await run("runuser", ["-u", "postgres", "--", command, ...args]) : await run(command, args);
  return stdout;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let dataDir: string | undefined;
let url: string;
const servers: ServerProcess[] = [];
const peers: LivePeer[] = [];

const start = () => pgTool("pg_ctl", "start", "-w", "-t", "60", "-D", dataDir!, "-l", path.join(dataDir!, "server.log"), "-o", `-p ${new URL(url).port} -k ${dataDir} -c listen_addresses=127.0.0.1 -c fsync=off`);
const stop = () => pgTool("pg_ctl", "stop", "-w", "-t", "60", "-m", "fast", "-D", dataDir!);

beforeAll(async () => {
  if (!BIN) return;
  const dir = mkdtempSync(path.join(tmpdir(), "acs-pg-cluster-"));
  dataDir = path.join(dir, "data");
  if (AS_ROOT) {
    const [uid, gid] = (await Promise.all([run("id", ["-u", "postgres"]), run("id", ["-g", "postgres"])])).map((r) => Number(r.stdout.trim()));
    chownSync(dir, uid!, gid!);
  }
  await pgTool("initdb", "-D", dataDir, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8");
  url = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`;
  await start();
  const env = { SESSION_API_KEY: KEY, ACS_SECRET_KEY: randomBytes(32).toString("hex") };
  for (let i = 0; i < 2; i++) {
    const serverDir = path.join(dir, `server-${i}`);
    servers.push(await spawnServer(serverDir, { env, flags: ["--store", url] }));
  }
}, 120_000);

afterAll(async () => {
  for (const p of peers) p.ws.terminate();
  for (const s of servers) {
    s.process.kill("SIGTERM");
    await exited(s.process);
  }
  if (dataDir) {
    await stop().catch(() => undefined);
    rmSync(path.dirname(dataDir), { recursive: true, force: true });
  }
}, 120_000);

const message = (text: string) => ({ role: "user", content: [{ type: "text", text }] });
/**
 * A client's pause before it tries again (a writer after a 503, the subscriber after its socket was
 * closed or refused): what the clients do, the load's pacing, never a wait of the test's.
 */
const backoff = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Rejects with `what` after `ms`: a safety net for a test that would hang, never a bound it checks. */
function safetyNet(what: string, ms: number): { net: Promise<never>; clear: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const net = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out (${ms} ms): ${what}`)), ms)));
  net.catch(() => {});
  return { net, clear: () => clearTimeout(timer) };
}

/** The writers' progress: `until` resolves once `ready()` holds, checked at each `changed()` (each reply). */
function progress() {
  const checks = new Set<() => void>();
  return {
    changed: () => {
      for (const check of [...checks]) check();
    },
    async until(what: string, ready: () => boolean, safetyMs = 60_000): Promise<void> {
      const { net, clear } = safetyNet(what, safetyMs);
      let check = () => {};
      const reached = new Promise<void>((resolve) => {
        check = () => {
          if (ready()) resolve();
        };
      });
      checks.add(check);
      check();
      try {
        await Promise.race([net, reached]);
      } finally {
        checks.delete(check);
        clear();
      }
    },
  };
}

/** A call that fails the test instead of hanging. */
async function bounded(call: Promise<Reply>): Promise<Reply> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`a request took more than ${REQUEST_LIMIT_MS} ms`)), REQUEST_LIMIT_MS)));
  try {
    return await Promise.race([call, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A subscriber that follows a conversation across reconnections: when a server closes its socket
 * (or refuses it while the database is down), it reconnects to the next instance with `after_id`.
 */
function follower(conversationId: string, firstId: string) {
  const ids: string[] = [firstId];
  let stopped = false;
  let stop = () => {};
  const stopping = new Promise<void>((resolve) => (stop = resolve));
  let connections = 0;
  let awaited: { id: string; arrived: () => void } | undefined;
  const loop = (async () => {
    for (let i = 0; !stopped; i++) {
      const live = connectLive(servers[i % servers.length]!.url, livePath(conversationId, { after_id: ids[ids.length - 1]! }), { headers: { "X-Session-API-Key": KEY } });
      peers.push(live);
      let taken = 0;
      const take = () => {
        const events = live.events();
        for (; taken < events.length; taken++) {
          const id = events[taken].id as string;
          ids.push(id);
          if (id === awaited?.id) awaited.arrived();
        }
      };
      live.ws.on("message", take);
      const opened = await live.opened.then(() => true, () => false);
      if (opened) connections++;
      await Promise.race([live.closed, stopping]);
      take();
      live.ws.terminate();
      if (!stopped) await backoff(100);
    }
  })();
  return {
    ids,
    connections: () => connections,
    /**
     * Waits until the event `id` (a sentinel: the last one appended) has arrived, then stops
     * following. The channel delivers in append order, so a duplicate or a late event of the ones
     * before it would have come before it.
     */
    async through(id: string) {
      if (!ids.includes(id)) {
        const { net, clear } = safetyNet(`the sentinel ${id} never arrived (${ids.length} events did)`, 60_000);
        try {
          await Promise.race([net, new Promise<void>((resolve) => (awaited = { id, arrived: resolve }))]);
        } finally {
          clear();
        }
      }
      stopped = true;
      stop();
      await loop;
    },
  };
}

describe.skipIf(!BIN)(`a PostgreSQL restart under load (a private cluster${BIN ? "" : "; skipped: no initdb found in ACS_TEST_PG_BIN, /usr/lib/postgresql/*/bin or PATH"})`, () => {
  it("answers 503 while the database is down, loses and duplicates nothing acknowledged, and serves again on both instances", async () => {
    const calls = servers.map((s) => httpCaller(s.url, KEY));
    const created = await calls[0]!("POST", "/api/conversations", { json: {} });
    expect(created.status, created.text).toBe(200);
    const id = created.body.conversation_id as string;
    const seed = await calls[1]!("POST", `/api/conversations/${id}/events`, { json: message("seed") });
    expect(seed.status, seed.text).toBe(200);
    const follow = follower(id, seed.body.id as string);

    const acknowledged: string[] = [];
    const conversations: string[] = [];
    const unavailable: Reply[] = [];
    const unexpected: string[] = [];
    const afterRestart = [0, 0];
    /** 503s while the database was down, per instance and per writer. */
    const downAt = [0, 0];
    const downFor = Array.from({ length: WRITERS }, () => 0);
    let down = false;
    let restarted = false;
    let stopWriters = false;
    const progressed = progress();
    const replay = randomTrajectory(seededRandom(23), REPLAY).map((e) => JSON.stringify(e)).join("\n");
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; !stopWriters; i++) {
        const instance = (w + i) % 2;
        const creates = w === 0; // one writer creates whole conversations from a replay
        const reply = await bounded(
          creates ? calls[instance]!("POST", "/api/conversations", { json: { replay_json: replay } }) : calls[instance]!("POST", `/api/conversations/${id}/events`, { json: message(`w${w} ${i}`) }),
        );
        if (reply.status === 200) {
          if (creates) conversations.push(reply.body.conversation_id as string);
          else acknowledged.push(reply.body.id as string);
          if (restarted) afterRestart[instance]!++;
        } else if (reply.status === 503) {
          unavailable.push(reply);
          if (down && !restarted) {
            downAt[instance]!++;
            downFor[w]!++;
          }
        } else {
          unexpected.push(`${reply.status} ${reply.text}`);
        }
        progressed.changed();
        if (reply.status === 503) await backoff(20);
      }
    });
    // A writer's failure (a request that hung) ends the waits below at once.
    const writing = Promise.all(writers);
    writing.catch(() => {});
    const wait = (what: string, ready: () => boolean) => Promise.race([progressed.until(what, () => unexpected.length > 0 || ready()), writing]);

    await wait("30 acknowledged appends", () => acknowledged.length >= 30);
    await stop();
    down = true;
    // Every writer meets the outage, on both instances: a 503 each (not a hang, not a 500).
    await wait("a 503 for every writer and from both instances", () => downFor.every((n) => n > 0) && downAt.every((n) => n > 0));
    const during = unavailable.length;
    await start();
    restarted = true;
    // Both servers serve again, without a restart of their own.
    await wait("10 writes acknowledged by each instance after the restart", () => afterRestart[0]! >= 10 && afterRestart[1]! >= 10);
    stopWriters = true;
    await writing;
    // The sentinel: appended after every other write, the last event the subscriber waits for.
    const sentinel = await calls[0]!("POST", `/api/conversations/${id}/events`, { json: message("sentinel") });
    expect(sentinel.status, sentinel.text).toBe(200);
    acknowledged.push(sentinel.body.id as string);

    expect(unexpected).toEqual([]);
    expect(during).toBeGreaterThan(0);
    expect(downAt.every((n) => n > 0), `503s while down per instance: ${downAt.join(", ")}`).toBe(true);
    for (const reply of unavailable) {
      expect(reply.headers.get("content-type")).toMatch(/application\/json/);
      expect(typeof reply.body?.detail, reply.text).toBe("string");
    }
    expect(afterRestart[0]).toBeGreaterThanOrEqual(10);
    expect(afterRestart[1]).toBeGreaterThanOrEqual(10);
    for (const s of servers) expect(s.process.exitCode).toBeNull();

    // Every acknowledged append stored exactly once (a 503 may still have committed: its event is there once too).
    const order = (await adminQuery<{ id: string }>("select e.id from acs.events e join acs.conversations c on c.pk = e.conv where c.id = $1 order by e.seq", [id], url)).map((r) => r.id);
    expect(new Set(order).size).toBe(order.length);
    for (const event of acknowledged) expect(order).toContain(event);
    // No partial conversation: each visible one holds its whole replay; each acknowledged one is there.
    const counts = await adminQuery<{ id: string; event_count: number; stored: number }>(
      "select c.id, c.event_count::int as event_count, (select count(*)::int from acs.events e where e.conv = c.pk) as stored from acs.conversations c where c.id is not null and c.id <> $1",
      [id],
      url,
    );
    for (const row of counts) expect(row).toMatchObject({ event_count: REPLAY, stored: REPLAY });
    const visible = new Set(counts.map((r) => r.id));
    for (const conversation of conversations) expect(visible.has(conversation), conversation).toBe(true);
    // The subscriber has every stored event once, in append order, the sentinel last.
    expect(order.at(-1)).toBe(sentinel.body.id);
    await follow.through(sentinel.body.id as string);
    expect(follow.ids).toEqual(order);
    expect(follow.connections()).toBeGreaterThanOrEqual(1);
  }, 180_000);
});
