/** The `acs-mock` command line. */
import { existsSync } from "node:fs";
import { closestOption, parseCommandLine } from "@acs-toolkit/cli-kit";
import { instantMicros } from "@acs-toolkit/schema/search";
import { parseDuration } from "./front.js";
import type { MockOptions } from "./mock.js";
import { BUILT_IN_SCENARIOS } from "./scenarios/builtin.js";
import { loadScenarioFile } from "./scenarios/load.js";
import type { Scenario } from "./scenarios/types.js";
import { DEFAULT_START } from "./world.js";

export const MOCK_USAGE = `Usage: acs-mock [options]

A mock of the Agent Conversation Service for frontend work: Prism checks every request against the
spec, a stateful world (the reference server's code, in memory) answers, scenarios stream live.

Options:
  --host HOST            address to listen on (default 127.0.0.1)
  --port N               port, 0 for any free one [ACS_MOCK_PORT] (default 4010)
  --scenario NAME|FILE   serve this scenario, repeatable: a built-in name (${Object.keys(BUILT_IN_SCENARIOS).join(", ")})
                         or a .json/.jsonl file (a recording works as is). Default: every built-in
  --seed N               seed of ids, texts, timings and generated data (default 1)
  --speed N|instant      pace of streams and agent turns: 1 = as recorded, 10 = ten times faster,
                         instant = everything at once (default 1)
  --start ISO|now        time of the first event of the built-in scenarios (default 2026-02-05T11:24:45Z)
  --latency DURATION     delay every response, e.g. 200ms or 1.5s (default 0)
  --key KEY              accepted X-Session-API-Key, repeatable [SESSION_API_KEY, comma-separated]
                         (default mock-session-key)
  --private-read         event search, count and the live channel need the key too (as the
                         reference server by default); without it they are open, as the interface says
  --cors-origin ORIGIN   allowed browser origin, repeatable (default *: any)
  --no-cors              no CORS headers at all
  --stream-at-start      stream every scenario now, not when its first live client subscribes
  --log-level LEVEL      fatal, error, warn, info (one line per request), debug, silent (default warn)
  -h, --help             print this help
  -v, --version          print the version

Per request: Prefer: code=404 | example=NAME | dynamic=true | latency=200ms (see the README).
`;

export class MockConfigError extends Error {}

export interface MockCliConfig extends MockOptions {
  help: boolean;
  version: boolean;
  /** Scenario names and files as given (for the banner). */
  scenarioArgs: string[];
}

const LOG_LEVELS = new Set(["fatal", "error", "warn", "info", "debug", "trace", "silent"]);

/**
 * @throws MockConfigError with a sentence naming the bad flag (a mistyped flag gets the closest one:
 * `unknown option --sped (did you mean --speed?)`); ScenarioFileError for a bad scenario file
 */
export function parseMockArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): MockCliConfig {
  const { values } = parseCommandLine(
    {
      args: argv,
      options: {
        host: { type: "string" },
        port: { type: "string" },
        scenario: { type: "string", multiple: true },
        seed: { type: "string" },
        speed: { type: "string" },
        start: { type: "string" },
        latency: { type: "string" },
        key: { type: "string", multiple: true },
        "private-read": { type: "boolean" },
        "cors-origin": { type: "string", multiple: true },
        "no-cors": { type: "boolean" },
        "stream-at-start": { type: "boolean" },
        "log-level": { type: "string" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "v" },
      },
    },
    MockConfigError,
  );
  const whole = (name: string, text: string | undefined, fallback: number, max: number) => {
    if (text === undefined) return fallback;
    if (!/^\d+$/.test(text) || Number(text) > max) throw new MockConfigError(`${name} must be a whole number from 0 to ${max}, got "${text}"`);
    return Number(text);
  };
  const port = whole("--port", values.port ?? env.ACS_MOCK_PORT, 4010, 65535);
  const seed = whole("--seed", values.seed, 1, 2 ** 32 - 1);

  let speed: MockOptions["speed"] = 1;
  if (values.speed !== undefined) {
    if (values.speed === "instant") speed = "instant";
    else if (/^\d+(\.\d+)?$/.test(values.speed) && Number(values.speed) > 0) speed = Number(values.speed);
    else throw new MockConfigError(`--speed must be a positive number or "instant", got "${values.speed}"`);
  }
  let start = DEFAULT_START;
  if (values.start !== undefined) {
    // The toolkit's one timestamp parser: without an offset the time is UTC, as event timestamps are.
    const micros = values.start === "now" ? Date.now() * 1000 : instantMicros(values.start);
    if (micros === undefined) throw new MockConfigError(`--start must be an ISO-8601 date-time or "now", got "${values.start}"`);
    start = Math.floor(micros / 1000);
  }
  let latencyMs = 0;
  if (values.latency !== undefined) {
    const parsed = parseDuration(values.latency);
    if (parsed === undefined) throw new MockConfigError(`--latency must be a duration such as 200ms or 1.5s, got "${values.latency}"`);
    latencyMs = parsed;
  }
  const logLevel = values["log-level"] ?? "warn";
  if (!LOG_LEVELS.has(logLevel)) throw new MockConfigError(`--log-level must be one of ${[...LOG_LEVELS].join(", ")}, got "${logLevel}"`);
  const keys = values.key ?? (env.SESSION_API_KEY ?? "").split(",").map((k) => k.trim()).filter(Boolean);
  if (keys.some((k) => k === "")) throw new MockConfigError("--key must not be empty");
  if (values["no-cors"] && values["cors-origin"]) throw new MockConfigError("--no-cors and --cors-origin contradict each other");

  const scenarioArgs = values.scenario ?? [];
  const scenarios: Array<string | Scenario> = scenarioArgs.map((arg) => {
    if (arg in BUILT_IN_SCENARIOS) return arg;
    if (!existsSync(arg) && !/[./\\]/.test(arg)) {
      const names = Object.keys(BUILT_IN_SCENARIOS);
      const suggestion = closestOption(arg, names);
      throw new MockConfigError(`--scenario ${arg}: no such built-in scenario (${suggestion ? `did you mean ${suggestion}? ` : ""}${names.join(", ")}) and no such file`);
    }
    return loadScenarioFile(arg, seed);
  });
  return {
    help: values.help ?? false,
    version: values.version ?? false,
    host: values.host ?? "127.0.0.1",
    port,
    seed,
    speed,
    start,
    latencyMs,
    logLevel,
    keys,
    publicRead: !values["private-read"],
    corsOrigins: values["no-cors"] ? [] : (values["cors-origin"] ?? ["*"]),
    streamAtStart: values["stream-at-start"] ?? false,
    ...(scenarios.length > 0 && { scenarios }),
    scenarioArgs,
  };
}
