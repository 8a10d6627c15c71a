/**
 * Sending one case and judging the answer. A case fails on a 5xx, an answer of the application
 * that is not JSON, an answer later than 2 s, or a process that died.
 */
import { request } from "node:http";
import { connect } from "node:net";
import { WebSocket } from "ws";
import type { FuzzCase, HttpCase, RawCase, WsCase } from "./cases.js";
import type { Target } from "./target.js";

export const REQUEST_BUDGET_MS = 2_000;
/** No answer (or, on a WebSocket, no frame) for this long is a hang, whatever the timing mode. */
export const HANG_MS = REQUEST_BUDGET_MS * 5;

/** "fail": an answer or a silence over REQUEST_BUDGET_MS fails the case; "count": only a hang (HANG_MS) does. */
export type Timing = "fail" | "count";
/** The longest a WebSocket session may last, however steadily the server sends (see ws()). */
const SESSION_CAP_MS = 60_000;

interface Outcome {
  /** 0 when there was no HTTP answer (a raw case the server closed, a WebSocket session). */
  status: number;
  ms: number;
  /** Why the case fails, or undefined. */
  problem?: string;
}

/** Answers that are not JSON by design: the API reference page and its assets, file bytes, HEAD, 204. */
function jsonExpected(c: HttpCase, status: number, contentType: string): boolean {
  if (c.method === "HEAD" || status === 204 || status === 101) return false;
  const path = c.target.split("?")[0]!;
  if (status < 300 && (/^\/docs/.test(path) || /\/files\//.test(path))) return false;
  return !/text\/html|octet-stream|javascript|text\/css/.test(contentType) || status >= 400;
}

function http(target: Target, c: HttpCase): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const url = new URL(target.url);
    // Content-Length always: Node's client would send an OPTIONS body unframed.
    const headers = c.body === undefined ? c.headers : { ...c.headers, "Content-Length": String(Buffer.byteLength(c.body)) };
    const req = request({ host: url.hostname, port: url.port, method: c.method, path: c.target, headers, timeout: HANG_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", () => {});
      res.on("end", () => {
        const ms = performance.now() - started;
        const status = res.statusCode ?? 0;
        const text = Buffer.concat(chunks).toString("utf8");
        const type = String(res.headers["content-type"] ?? "");
        let problem: string | undefined;
        if (status >= 500) problem = `answered ${status}: ${text.slice(0, 200)}`;
        else if (jsonExpected(c, status, type) && text.length > 0) {
          try {
            JSON.parse(text);
          } catch {
            problem = `answered ${status} with a body that is not JSON (${type}): ${text.slice(0, 120)}`;
          }
        }
        resolve({ status, ms, problem });
      });
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (error) => resolve({ status: 0, ms: performance.now() - started, problem: `no answer: ${error.message}` }));
    req.end(c.body);
  });
}

/** Raw bytes: an answer, if any, is a 4xx with a JSON body; or the server closes the connection. */
function raw(target: Target, c: RawCase): Promise<Outcome> {
  const started = performance.now();
  const url = new URL(target.url);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (problem?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString("latin1");
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? 0);
      const body = Buffer.from(text.slice(text.indexOf("\r\n\r\n") + 4).slice(0, length), "latin1").toString("utf8");
      if (!problem && status >= 500) problem = `answered ${status}`;
      if (!problem && status >= 400 && body.length > 0) {
        try {
          JSON.parse(body);
        } catch {
          problem = `answered ${status} with a body that is not JSON: ${body.slice(0, 120)}`;
        }
      }
      resolve({ status, ms: performance.now() - started, problem });
    };
    // An incomplete request may be left waiting for more: after the budget, the case is over (the
    // server's own timeouts end such connections; no answer is owed yet).
    const timer = setTimeout(() => finish(), REQUEST_BUDGET_MS);
    socket.on("data", (chunk) => {
      chunks.push(chunk);
      const text = Buffer.concat(chunks).toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? NaN);
      if (end !== -1 && (text.startsWith("HTTP/1.1 101") || (Number.isFinite(length) && text.length >= end + 4 + length))) finish();
    });
    socket.on("error", () => finish());
    socket.on("close", () => finish());
    socket.write(Buffer.from(c.bytes, "latin1"));
  });
}

/**
 * A WebSocket session: the frames, then a message carrying a marker; the session ends when the
 * marker comes back recorded, or the server closes the connection. Whatever the server sends is JSON.
 * The budget is of silence, not of length: a session that asks for the history (`resend_all`)
 * receives every event the run has recorded before its marker, which grows with the run (its
 * floods record 200 messages each: 100k events by the deep run's 60,000th case, about 2.5 s to
 * stream). The server must never go REQUEST_BUDGET_MS without a frame; the whole session is capped
 * at SESSION_CAP_MS.
 */
let markers = 0;
function ws(target: Target, c: WsCase, silenceMs: number): Promise<Outcome> {
  const started = performance.now();
  const marker = `fuzz-marker-${++markers}`;
  return new Promise((resolve) => {
    const socket = new WebSocket(target.url.replace(/^http/, "ws") + c.target, { headers: { "X-Session-API-Key": target.key } });
    let problem: string | undefined;
    const finish = () => {
      clearTimeout(timer);
      clearTimeout(cap);
      socket.terminate();
      resolve({ status: 0, ms: performance.now() - started, problem });
    };
    const silence = () => {
      problem ??= `the server sent nothing for ${silenceMs} ms before the session ended`;
      finish();
    };
    const timer = setTimeout(silence, silenceMs);
    const cap = setTimeout(() => {
      problem ??= `the session did not end within ${SESSION_CAP_MS} ms`;
      finish();
    }, SESSION_CAP_MS);
    socket.on("message", (data, binary) => {
      timer.refresh();
      if (binary) problem ??= "sent a binary frame";
      else {
        const text = String(data);
        try {
          JSON.parse(text);
        } catch {
          problem ??= `sent a frame that is not JSON: ${text.slice(0, 80)}`;
        }
        if (text.includes(marker)) finish();
      }
    });
    socket.on("open", () => {
      for (const frame of c.frames) socket.send(frame.binary ? Buffer.from(frame.data, "latin1") : frame.data, { binary: frame.binary });
      socket.send(JSON.stringify({ role: "user", content: [{ type: "text", text: marker }] }));
    });
    socket.on("unexpected-response", (_req, res) => {
      if ((res.statusCode ?? 0) >= 500) problem = `upgrade answered ${res.statusCode}`;
      finish();
    });
    socket.on("error", () => {});
    socket.on("close", (code) => {
      if (code === 1011) problem ??= "closed with 1011 (internal error)";
      finish();
    });
  });
}

/** Sends a case and judges it, the process's liveness included. */
export async function execute(target: Target, c: FuzzCase, timing: Timing = "fail"): Promise<Outcome> {
  const outcome = c.kind === "http" ? await http(target, c) : c.kind === "raw" ? await raw(target, c) : await ws(target, c, timing === "fail" ? REQUEST_BUDGET_MS : HANG_MS);
  if (timing === "fail" && !outcome.problem && c.kind === "http" && outcome.ms > REQUEST_BUDGET_MS) outcome.problem = `answered after ${Math.round(outcome.ms)} ms (budget ${REQUEST_BUDGET_MS} ms)`;
  if (!target.alive()) outcome.problem = `the process died${target.stderr() ? `: ${target.stderr().slice(-600)}` : ""}`;
  return outcome;
}
