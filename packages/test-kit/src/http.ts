/** Black-box HTTP calls for the tests of every implementation of the interface (server, mock). */

/** A response, read whole: its status, headers, text and that text parsed as JSON (undefined when it is not). */
export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** What a call sends besides its method and route. */
export interface CallOptions {
  /** The X-Session-API-Key value; `null` sends none. Default: the caller's key. */
  key?: string | null;
  /** Sent as a JSON body (with Content-Type application/json unless `headers` names one). */
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
  /** Appended to the route's query; an array repeats the parameter. */
  query?: Record<string, string | number | string[]>;
}

/** Sends a request and reads the reply whole. */
export type Call = (method: string, route: string, options?: CallOptions) => Promise<Reply>;

/** A Call against `baseUrl` that sends `key` unless told otherwise. */
export function httpCaller(baseUrl: string, key: string): Call {
  return async (method, route, options = {}) => {
    const url = new URL(route, baseUrl);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(v));
    }
    const headers: Record<string, string> = { ...options.headers };
    if (options.key !== null) headers["X-Session-API-Key"] = options.key ?? key;
    let body = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers["Content-Type"] ??= "application/json";
    }
    const response = await fetch(url, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, text, body: parsed };
  };
}
