#!/usr/bin/env node
/** `acs-mock`: starts the mock and prints what it serves. */
import { EXIT_USAGE, usageErrorLine } from "@acs-toolkit/cli-kit";
import packageJson from "../package.json" with { type: "json" };
import { ScenarioFileError } from "./scenarios/load.js";
import { MOCK_USAGE, MockConfigError, parseMockArgs } from "./config.js";
import { reportEventLoopDelay } from "@acs-toolkit/server";
import { startMock } from "./mock.js";

const began = performance.now();
let config;
try {
  config = parseMockArgs(process.argv.slice(2));
} catch (error) {
  if (error instanceof MockConfigError || error instanceof ScenarioFileError) {
    console.error(usageErrorLine("acs-mock", error.message));
    process.exit(EXIT_USAGE);
  }
  throw error;
}
if (config.help) {
  process.stdout.write(MOCK_USAGE);
  process.exit(0);
}
if (config.version) {
  process.stdout.write(`${packageJson.version}\n`);
  process.exit(0);
}

let mock;
try {
  mock = await startMock(config);
} catch (error) {
  console.error(`acs-mock: cannot start: ${(error as Error).message}`);
  process.exit(1);
}
reportEventLoopDelay(); // to a parent process that started this one with an IPC channel (fuzzer)
const { world, url, wsUrl } = mock;
const key = world.keys[0]!;
const lines = [
  `acs-mock: the Agent Conversation Service mock on ${url} (ready in ${Math.round(performance.now() - began)} ms)`,
  "",
  `  checks     every request, by Prism against the bundled OpenAPI document`,
  `  key        X-Session-API-Key: ${key}${world.keys.length > 1 ? ` (+${world.keys.length - 1} more)` : ""}`,
  `             event search, count and the live channel ${world.publicRead ? "are open (as the interface declares)" : "need it too (--private-read)"}`,
  `  pace       speed ${world.speed === "instant" ? "instant (every event stored at start)" : `${world.speed}x, scenarios stream when their first live client subscribes${config.streamAtStart ? " (now: --stream-at-start)" : ""}`}; seed ${world.seed}`,
  `  live       ${wsUrl}/sockets/events/{conversation_id}   (resend_all=true, after_id=<event id>)`,
  `  docs       ${url}/docs (the API reference)   ${url}/__mock (this list as JSON)`,
  "",
  "  conversations (GET /api/conversations/{id}/events/search):",
  ...world.scenarios.map((s) => `    ${s.name.padEnd(13)} ${s.conversationId}  ${String(s.events.length).padStart(5)} events  ${s.description}`),
  "",
  `  try        curl '${url}/api/conversations/${world.scenarios[0]?.conversationId ?? "{id}"}/events/search?limit=5'`,
  `             curl -H 'Prefer: code=500' ${url}/api/conversations/${world.scenarios[0]?.conversationId ?? "{id}"}/events/search`,
  "",
  "Ctrl-C stops it.",
];
console.log(lines.join("\n"));

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  mock.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
