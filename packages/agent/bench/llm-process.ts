/**
 * The benchmark's LLM, in a process of its own so that its work does not count in the runtime's
 * event loop: the test kit's scripted server, answering every request like an agent that calls
 * `think` (or runs `true` in the terminal, every `TERMINAL_EVERY`-th step when set) until the
 * conversation holds `STEPS` results, then `finish`, each reply after `LATENCY_MS`. A conversation
 * whose first message is `BURN` plays a hostile model instead: it leaves `BURNERS` busy loops
 * running in the background, each in a session of its own, and finishes. Prints its URL on the
 * first line.
 */
import { ScriptedLlmServer } from "../src/test-kit/index.js";

/** The first message of a conversation that is to burn the CPU (set by the bench). */
const burn = process.env.BURN;

const steps = Number(process.env.STEPS ?? 50);
const terminalEvery = Number(process.env.TERMINAL_EVERY ?? 0);
/** Milliseconds each reply waits, as a real model takes time to answer (0: at once). */
const latencyMs = Number(process.env.LATENCY_MS ?? 0);
const burners = Number(process.env.BURNERS ?? 4);
const later = () => (latencyMs > 0 ? { hold: new Promise((resolve) => setTimeout(resolve, latencyMs)) } : {});

const server = await ScriptedLlmServer.start({
  keepRequests: false,
  fallback: (request) => {
    const messages = request.body.messages as Array<{ role: string; content?: unknown }>;
    const done = messages.filter((message) => message.role === "tool").length;
    if (burn && JSON.stringify(messages.find((message) => message.role === "user")?.content ?? "").includes(burn)) {
      const command = `for i in $(seq ${burners}); do setsid sh -c 'while :; do :; done' & done; echo burning`;
      return done === 0 ? { toolCalls: [{ name: "terminal", arguments: { command } }] } : { toolCalls: [{ name: "finish", arguments: { message: "burning" } }] };
    }
    if (done >= steps) return { ...later(), toolCalls: [{ name: "finish", arguments: { message: "done" } }] };
    const terminal = terminalEvery > 0 && (done + 1) % terminalEvery === 0;
    return terminal
      ? { ...later(), content: "Checking.", toolCalls: [{ name: "terminal", arguments: { command: "true" } }] }
      : { ...later(), content: `Step ${done + 1}.`, toolCalls: [{ name: "think", arguments: { thought: `thought number ${done + 1} ${"x".repeat(200)}` } }] };
  },
});
process.stdout.write(`${server.url}\n`);
process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
