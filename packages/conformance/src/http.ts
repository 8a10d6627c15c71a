/**
 * The suite's HTTP client: one request at a time against the implementation under test, every
 * answer recorded (the secrets check scans them all) and described compactly for evidence.
 */

/** One answer of the implementation. */
export interface Reply {
  method: string;
  /** The path and query that were asked, for evidence. */
  target: string;
  status: number;
  headers: Headers;
  /** The body as UTF-8 text (`bytes` holds it exactly). */
  text: string;
  /** The body parsed as JSON, `undefined` when it is empty or not JSON. */
  json: any;
  bytes: Buffer;
}

export interface RequestOptions {
  /** The key to send; `null` sends none. Default: the suite's key (none when it has none). */
  key?: string | null;
  /** Sent as a JSON body (`Content-Type: application/json`). */
  json?: unknown;
  body?: RequestInit["body"];
  headers?: Record<string, string>;
  /** Appended to the URL; an array repeats the parameter. */
  query?: Record<string, string | number | undefined | ReadonlyArray<string | number>>;
}

/** The network failed (nothing answered): connection refused, reset, DNS, timeout. */
export class NetworkError extends Error {}

const MAX_EVIDENCE = 400;

/** `GET /api/… → 422 {"detail":[…]}`, the body cut to a readable length. */
export function describeReply(reply: Reply): string {
  const body = reply.text.length > MAX_EVIDENCE ? `${reply.text.slice(0, MAX_EVIDENCE)}… (${reply.text.length} characters)` : reply.text;
  return `${reply.method} ${reply.target} → ${reply.status}${body ? ` ${body}` : ""}`;
}

export class HttpClient {
  /** Every reply received, in order. */
  readonly received: Reply[] = [];

  /**
   * @param baseUrl where the implementation answers; paths are resolved against it (a base path is kept)
   * @param apiKey the `X-Session-API-Key` to send by default
   * @param timeoutMs how long one request may take
   */
  constructor(
    readonly baseUrl: URL,
    readonly apiKey: string | undefined,
    readonly timeoutMs: number,
  ) {}

  /** The absolute URL of a path of the interface (`/api/…`), under the base URL's path. */
  url(route: string): URL {
    const base = this.baseUrl.href.endsWith("/") ? this.baseUrl.href : `${this.baseUrl.href}/`;
    return new URL(route.replace(/^\//, ""), base);
  }

  async request(method: string, route: string, options: RequestOptions = {}, signal?: AbortSignal): Promise<Reply> {
    const url = this.url(route);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(v));
    }
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? this.apiKey : options.key;
    if (key !== null && key !== undefined) headers["X-Session-API-Key"] = key;
    let body = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers["Content-Type"] ??= "application/json";
    }
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const target = `${url.pathname}${url.search}`;
    let response: Response;
    let bytes: Buffer;
    try {
      response = await fetch(url, { method, headers, body, signal: signal ? AbortSignal.any([signal, timeout]) : timeout, redirect: "manual" });
      bytes = Buffer.from(await response.arrayBuffer());
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const reason = timeout.aborted ? `no answer within ${this.timeoutMs} ms` : (cause?.code ?? cause?.message ?? (error as Error).message);
      throw new NetworkError(`${method} ${target}: ${reason}`);
    }
    const text = bytes.toString("utf8");
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    const reply: Reply = { method, target, status: response.status, headers: response.headers, text, json, bytes };
    this.received.push(reply);
    return reply;
  }
}
