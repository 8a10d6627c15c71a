/**
 * A scripted OpenAI-compatible LLM: a real HTTP server on a loopback port that answers
 * `POST /v1/chat/completions` with the replies it was given, in order: tool calls (any arguments
 * text, malformed JSON included), text, HTTP errors (with headers such as `Retry-After`), replies
 * held until the test releases them, and, when the request asks for it, server-sent-event
 * streaming in the OpenAI chunk format. It records every request it gets.
 *
 * A request with no reply left is answered by `fallback` when one is given (a function of the
 * request: an endless agent for benchmarks), else 500 `script exhausted`, counted in `unexpected`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ScriptedToolCall {
  name: string;
  /** The arguments text as the model sends it; an object is serialised with JSON.stringify. */
  arguments: string | Record<string, unknown>;
  /** Default `call_<n>`. */
  id?: string;
}

export interface ScriptedUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  cached_tokens?: number;
  reasoning_tokens?: number;
  /** Reported as `usage.cost` (as OpenRouter does). */
  cost?: number;
}

interface ReplyTiming {
  /** The reply waits for this promise (a gate the test opens) before it is sent. */
  hold?: Promise<unknown>;
}

export type ScriptedReply =
  | (ReplyTiming & { toolCalls: ScriptedToolCall[]; content?: string; reasoning?: string; usage?: ScriptedUsage })
  | (ReplyTiming & { text: string; reasoning?: string; usage?: ScriptedUsage })
  | (ReplyTiming & { status: number; body?: unknown; headers?: Record<string, string> });

export interface RecordedRequest {
  /** The parsed JSON body (model, messages, tools, stream…). */
  body: Record<string, unknown>;
  headers: IncomingMessage["headers"];
}

const DEFAULT_USAGE = { prompt_tokens: 100, completion_tokens: 20 };

export class ScriptedLlmServer {
  /** Every request received, in order. */
  readonly requests: RecordedRequest[] = [];
  /** Requests that found no reply left. */
  unexpected = 0;
  private readonly replies: ScriptedReply[] = [];
  private readonly waiters: Array<{ count: number; resolve: () => void }> = [];
  private responseCount = 0;
  private callCount = 0;

  private constructor(
    private readonly server: Server,
    /** Base URL of the OpenAI-compatible API (`http://127.0.0.1:<port>/v1`). */
    readonly url: string,
    private readonly fallback: ((request: RecordedRequest) => ScriptedReply) | undefined,
    /** Keep `requests` (default true; a long benchmark turns it off). */
    private readonly keepRequests: boolean,
  ) {}

  /** Starts the server on an ephemeral loopback port. */
  static async start(options: { fallback?: (request: RecordedRequest) => ScriptedReply; keepRequests?: boolean } = {}): Promise<ScriptedLlmServer> {
    const created: { instance?: ScriptedLlmServer } = {};
    const server = createServer((request, response) => void created.instance!.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    created.instance = new ScriptedLlmServer(server, `http://127.0.0.1:${port}/v1`, options.fallback, options.keepRequests ?? true);
    return created.instance;
  }

  /** Appends replies to the script. */
  play(...replies: ScriptedReply[]): this {
    this.replies.push(...replies);
    return this;
  }

  /** Replies not played yet. */
  get remaining(): number {
    return this.replies.length;
  }

  /** Resolves once `count` requests in all have arrived. */
  waitForRequests(count: number): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (request.method !== "POST" || !request.url?.endsWith("/chat/completions")) {
      response.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "not found" } }));
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    } catch {
      response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "body is not JSON" } }));
      return;
    }
    const recorded = { body, headers: request.headers };
    if (this.keepRequests) this.requests.push(recorded);
    for (const waiter of this.waiters.filter((w) => this.requests.length >= w.count)) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    const reply = this.replies.shift() ?? this.fallback?.(recorded);
    if (!reply) {
      this.unexpected++;
      response.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "script exhausted" } }));
      return;
    }
    if (reply.hold) await reply.hold;
    // The client may have gone (an interrupt aborts the call) while the reply was held.
    if (response.destroyed || response.socket?.destroyed) return;
    if ("status" in reply) {
      const errorBody = reply.body ?? { error: { message: `scripted error ${reply.status}`, type: "scripted", code: null } };
      response.writeHead(reply.status, { "content-type": "application/json", ...reply.headers }).end(JSON.stringify(errorBody));
      return;
    }
    const id = `chatcmpl-scripted-${++this.responseCount}`;
    const toolCalls =
      "toolCalls" in reply
        ? reply.toolCalls.map((call) => ({
            id: call.id ?? `call_${++this.callCount}`,
            type: "function" as const,
            function: { name: call.name, arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments) },
          }))
        : [];
    const content = "text" in reply ? reply.text : (reply.content ?? null);
    const usage = usageOf(reply.usage);
    if (body.stream === true) {
      this.stream(response, body, id, content, reply.reasoning ?? null, toolCalls, usage);
      return;
    }
    response.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        id,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: String(body.model),
        choices: [
          {
            index: 0,
            message: { role: "assistant", content, ...(reply.reasoning ? { reasoning_content: reply.reasoning } : {}), ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
            finish_reason: toolCalls.length ? "tool_calls" : "stop",
          },
        ],
        usage,
      }),
    );
  }

  /** The same reply as OpenAI streams it: content and arguments in fragments, usage last. */
  private stream(
    response: ServerResponse,
    body: Record<string, unknown>,
    id: string,
    content: string | null,
    reasoning: string | null,
    toolCalls: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }>,
    usage: Record<string, unknown>,
  ): void {
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const base = { id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: String(body.model) };
    const send = (delta: Record<string, unknown>, finish: string | null = null) =>
      response.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    send({ role: "assistant", content: "" });
    for (const piece of fragments(reasoning)) send({ reasoning_content: piece });
    for (const piece of fragments(content)) send({ content: piece });
    toolCalls.forEach((call, index) => {
      send({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] });
      for (const piece of fragments(call.function.arguments)) send({ tool_calls: [{ index, function: { arguments: piece } }] });
    });
    send({}, toolCalls.length ? "tool_calls" : "stop");
    if ((body.stream_options as { include_usage?: boolean } | undefined)?.include_usage) {
      response.write(`data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n`);
    }
    response.end("data: [DONE]\n\n");
  }
}

/** A text in three pieces (or none), as a model streams it. */
function fragments(text: string | null): string[] {
  if (!text) return [];
  const size = Math.max(1, Math.ceil(text.length / 3));
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
  return pieces;
}

function usageOf(usage: ScriptedUsage | undefined): Record<string, unknown> {
  const prompt = usage?.prompt_tokens ?? DEFAULT_USAGE.prompt_tokens;
  const completion = usage?.completion_tokens ?? DEFAULT_USAGE.completion_tokens;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: usage?.cached_tokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: usage?.reasoning_tokens ?? 0 },
    ...(usage?.cost !== undefined ? { cost: usage.cost } : {}),
  };
}
