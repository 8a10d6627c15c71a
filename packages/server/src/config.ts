/** Server configuration from flags and environment (flags win). Keys come from the environment only. */
import { constants } from "node:buffer";
import path from "node:path";
import { parseCommandLine } from "@acs-toolkit/cli-kit";
import { DEFAULT_UPLOAD_LIMITS, type UploadLimits } from "./upload-admission.js";

export interface ServerConfig {
  host: string;
  port: number;
  dataDir: string;
  /** Serve event search (and its count) without a key, as the interface declares no scheme there. */
  publicRead: boolean;
  /** Origins allowed by CORS; `*` allows any. Empty: no CORS headers. */
  corsOrigins: string[];
  uploadLimits: UploadLimits;
  /** Largest JSON body accepted (a replay_json of a long recording is large). */
  jsonLimitBytes: number;
  logLevel: string;
  /**
   * Who runs conversations: `record` (nothing runs: conversations are records) or `agent` (the LLM
   * agent of `@acs-toolkit/agent`, with the model of the stored settings).
   */
  runtime: "record" | "agent";
  /** Let agent commands run unconfined on the host when no sandbox (bubblewrap) works. */
  allowHostExecution: boolean;
  /** Give the agent's sandboxed commands the network. */
  agentNetwork: boolean;
  /** Seconds after which the agent closes a conversation that does not run (its shell and MCP servers stop). */
  agentIdleSeconds: number;
  /** The unprivileged host user the agent's commands run as when the server runs as root. */
  sandboxUser: { uid: number; gid: number };
  /** Resource limits of each agent conversation's commands (see `SandboxLimits` of `@acs-toolkit/agent`). */
  sandboxLimits: { processes: number; memoryBytes: number; fileBytes: number; cpuSeconds: number; tmpBytes: number; shmBytes: number };
  /**
   * Where each conversation's commands get a memory cgroup (their memory summed): `auto` (below the
   * server's own, where it can make one), a delegated cgroup v2 directory, or `off` (per process).
   */
  sandboxCgroup: "auto" | "off" | string;
  /** A PostgreSQL store instead of the embedded SQLite one (uploads and keys stay in dataDir). */
  store?: PostgresStoreConfig;
}

/** Where and how the server reaches a PostgreSQL store (`--store postgres://…`). */
export interface PostgresStoreConfig {
  url: string;
  /** Most connections in the pool. */
  maxConnections: number;
  /** Longest a statement runs before its request answers 503. */
  statementTimeoutMs: number;
  /**
   * How long a lease on a conversation's agent lasts without renewal (`--runtime agent` on several
   * instances); the owner renews it every third of it, another instance takes it over once it expires.
   */
  leaseTtlMs: number;
  /** Longest an instance waits for the owner of a conversation's agent to take a control it hands over; past it, 503. */
  forwardTimeoutMs: number;
}

export const USAGE = `Usage: acs-server [options]

Options (environment variable in brackets):
  --port N                 port to listen on, 0 for any free port [ACS_PORT, PORT] (default 3000)
  --host HOST              address to listen on [ACS_HOST] (default 127.0.0.1)
  --data-dir DIR           where the SQLite store, uploads and keys live [ACS_DATA_DIR] (default ./.data)
  --public-read            serve event search without a key [ACS_PUBLIC_READ=1]
  --cors-origin ORIGIN     allow a browser origin, repeatable; * for any [ACS_CORS_ORIGINS, comma-separated]
  --max-file-bytes N       upload limit per file [ACS_MAX_FILE_BYTES] (default 25 MiB)
  --max-files N            upload limit of files per request [ACS_MAX_FILES] (default 100)
  --max-request-bytes N    upload limit per request [ACS_MAX_REQUEST_BYTES] (default 250 MiB)
  --json-limit-bytes N     largest JSON body [ACS_JSON_LIMIT_BYTES] (default 64 MiB, at most 512 MiB)
  --runtime record|agent   who runs conversations [ACS_RUNTIME] (default record): record keeps them as
                           records; agent runs an LLM agent (the model of the stored settings) on each
                           conversation created without replay_json
  --allow-host-execution   let agent commands run unconfined on the host when bubblewrap is missing
                           or does not work [ACS_ALLOW_HOST_EXECUTION=1] (default: the terminal refuses)
  --agent-network          give the agent's sandboxed commands the network [ACS_AGENT_NETWORK=1]
  --agent-idle-seconds N   close an agent conversation that has not run for N seconds: its shell and
                           MCP servers stop, a message or a control reopens it [ACS_AGENT_IDLE_SECONDS]
                           (default 1800)
  --sandbox-user UID[:GID] the unprivileged user the agent's commands run as when the server runs as
                           root [ACS_SANDBOX_USER] (default 65534:65534, nobody)
  --sandbox-processes N    processes and threads of one conversation's commands at once
                           [ACS_SANDBOX_PROCESSES] (default 512)
  --sandbox-memory-bytes N memory of one conversation's commands together (a memory cgroup) and of each
                           process [ACS_SANDBOX_MEMORY_BYTES] (default 4 GiB)
  --sandbox-cgroup auto|off|DIR
                           where the sandboxes' memory and CPU cgroups are made: auto (below the
                           server's own cgroups, v1 or v2 with memory delegated), a delegated cgroup v2
                           directory, or off (memory bound per process, CPU by nice 10 alone)
                           [ACS_SANDBOX_CGROUP] (default auto)
  --sandbox-tmp-bytes N    disk space of one conversation's /tmp [ACS_SANDBOX_TMP_BYTES] (default 4 GiB)
  --sandbox-shm-bytes N    size of one conversation's /dev/shm, in memory [ACS_SANDBOX_SHM_BYTES]
                           (default 64 MiB)
  --sandbox-file-bytes N   largest file a command writes [ACS_SANDBOX_FILE_BYTES] (default 1 GiB)
  --sandbox-cpu-seconds N  CPU time of one command's process [ACS_SANDBOX_CPU_SECONDS] (default 3600)
  --store URL              a PostgreSQL store, postgres://user@host:5432/db, instead of SQLite in the data
                           directory (which still holds uploads and keys) [ACS_STORE_URL]
  --store-pool N           most PostgreSQL connections [ACS_STORE_POOL] (default 10)
  --store-timeout-ms N     longest a PostgreSQL statement runs; past it the request answers 503
                           [ACS_STORE_TIMEOUT_MS] (default 10000)
  --lease-ttl-ms N         with --runtime agent and --store: how long an instance's lease on a
                           conversation's agent lasts unrenewed (renewed every third of it); once it
                           expires another instance takes the agent over [ACS_LEASE_TTL_MS] (default 45000)
  --forward-timeout-ms N   with --runtime agent and --store: longest wait for the instance running a
                           conversation's agent to take a control or message handed to it; past it
                           the request answers 503 [ACS_FORWARD_TIMEOUT_MS] (default 5000)
  --log-level LEVEL        pino level: fatal, error, warn, info, debug, trace, silent [ACS_LOG_LEVEL] (default info)
  -h, --help               print this help
  -v, --version            print the version

Keys: SESSION_API_KEY holds the accepted X-Session-API-Key values (comma-separated, for rotation).
Without it the server generates a key at first start, stores it in <data-dir>/session-api-key (mode
0600) and prints it once. ACS_SECRET_KEY (64 hex characters or base64 of 32 bytes) encrypts stored
secrets; without it a key file <data-dir>/secret.key (mode 0600) is created.
`;

export class ConfigError extends Error {}

const LOG_LEVELS = new Set(["fatal", "error", "warn", "info", "debug", "trace", "silent"]);

function integer(name: string, text: string | undefined, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER, why = ""): number {
  if (text === undefined || text === "") return fallback;
  if (!/^\d+$/.test(text)) throw new ConfigError(`${name} must be a whole number, got "${text}"`);
  const value = Number(text);
  if (value < min) throw new ConfigError(`${name} must be at least ${min}, got ${value}`);
  if (value > max) throw new ConfigError(`${name} must be at most ${max}${why}, got ${value}`);
  return value;
}

/** A JSON body becomes one string before it is parsed: no larger than Node's longest string. */
const MAX_JSON_LIMIT = constants.MAX_STRING_LENGTH;

/** `UID` or `UID:GID` (the gid defaults to the uid), never root's. */
function sandboxUser(text: string | undefined): { uid: number; gid: number } {
  if (text === undefined || text === "") return { uid: 65534, gid: 65534 };
  const match = /^(\d+)(?::(\d+))?$/.exec(text);
  if (!match) throw new ConfigError(`--sandbox-user must be UID or UID:GID (numbers), got "${text}"`);
  const uid = Number(match[1]);
  const gid = Number(match[2] ?? match[1]);
  if (uid === 0 || gid === 0) throw new ConfigError(`--sandbox-user must not be root (uid or gid 0), got "${text}"`);
  if (uid > 0xfffffffe || gid > 0xfffffffe) throw new ConfigError(`--sandbox-user must be at most 4294967294, got "${text}"`);
  return { uid, gid };
}

/** `auto`, `off` or an absolute directory. */
function sandboxCgroup(text: string | undefined): "auto" | "off" | string {
  if (text === undefined || text === "" || text === "auto" || text === "off") return text || "auto";
  if (!path.isAbsolute(text)) throw new ConfigError(`--sandbox-cgroup must be auto, off or an absolute cgroup v2 directory, got "${text}"`);
  return text;
}

const truthy = (text: string | undefined) => text !== undefined && /^(1|true|yes|on)$/i.test(text);

/**
 * @throws ConfigError with a sentence naming the bad flag or variable (a mistyped flag gets the
 * closest one: `unknown option --prot (did you mean --port?)`)
 */
export function parseConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): ServerConfig & { help: boolean; version: boolean } {
  const { values } = parseCommandLine(
    {
      args: argv,
      options: {
        port: { type: "string" },
        host: { type: "string" },
        "data-dir": { type: "string" },
        "public-read": { type: "boolean" },
        "cors-origin": { type: "string", multiple: true },
        "max-file-bytes": { type: "string" },
        "max-files": { type: "string" },
        "max-request-bytes": { type: "string" },
        "json-limit-bytes": { type: "string" },
        "log-level": { type: "string" },
        runtime: { type: "string" },
        "allow-host-execution": { type: "boolean" },
        "agent-network": { type: "boolean" },
        "agent-idle-seconds": { type: "string" },
        "sandbox-user": { type: "string" },
        "sandbox-processes": { type: "string" },
        "sandbox-memory-bytes": { type: "string" },
        "sandbox-file-bytes": { type: "string" },
        "sandbox-cpu-seconds": { type: "string" },
        "sandbox-tmp-bytes": { type: "string" },
        "sandbox-shm-bytes": { type: "string" },
        "sandbox-cgroup": { type: "string" },
        store: { type: "string" },
        "store-pool": { type: "string" },
        "store-timeout-ms": { type: "string" },
        "lease-ttl-ms": { type: "string" },
        "forward-timeout-ms": { type: "string" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "v" },
      },
    },
    ConfigError,
  );
  const logLevel = values["log-level"] ?? env.ACS_LOG_LEVEL ?? "info";
  if (!LOG_LEVELS.has(logLevel)) throw new ConfigError(`--log-level must be one of ${[...LOG_LEVELS].join(", ")}, got "${logLevel}"`);
  const port = integer("--port", values.port ?? env.ACS_PORT ?? env.PORT, 3000, 0);
  if (port > 65535) throw new ConfigError(`--port must be at most 65535, got ${port}`);
  const runtime = values.runtime ?? env.ACS_RUNTIME ?? "record";
  if (runtime !== "record" && runtime !== "agent") throw new ConfigError(`--runtime must be record or agent, got "${runtime}"`);
  const storeUrl = values.store ?? env.ACS_STORE_URL;
  if (storeUrl !== undefined && storeUrl !== "" && !/^postgres(ql)?:\/\//.test(storeUrl)) {
    throw new ConfigError(`--store must be a postgres:// or postgresql:// URL, got "${storeUrl.replace(/\/\/[^@/]*@/, "//…@")}"`);
  }
  const storePool = integer("--store-pool", values["store-pool"] ?? env.ACS_STORE_POOL, 10, 1, 1000);
  const storeTimeout = integer("--store-timeout-ms", values["store-timeout-ms"] ?? env.ACS_STORE_TIMEOUT_MS, 10_000, 1);
  // At least 300 ms: renewed every third of it, a shorter lease would expire under an ordinary pause of the event loop.
  const leaseTtl = integer("--lease-ttl-ms", values["lease-ttl-ms"] ?? env.ACS_LEASE_TTL_MS, 45_000, 300, 24 * 3600_000);
  const forwardTimeout = integer("--forward-timeout-ms", values["forward-timeout-ms"] ?? env.ACS_FORWARD_TIMEOUT_MS, 5_000, 1, 3600_000);
  const cors = values["cors-origin"] ?? (env.ACS_CORS_ORIGINS ? env.ACS_CORS_ORIGINS.split(",") : []);
  return {
    help: values.help ?? false,
    version: values.version ?? false,
    host: values.host ?? env.ACS_HOST ?? "127.0.0.1",
    port,
    dataDir: path.resolve(values["data-dir"] ?? env.ACS_DATA_DIR ?? ".data"),
    publicRead: values["public-read"] ?? truthy(env.ACS_PUBLIC_READ),
    corsOrigins: cors.map((o) => o.trim()).filter(Boolean),
    uploadLimits: {
      maxFileBytes: integer("--max-file-bytes", values["max-file-bytes"] ?? env.ACS_MAX_FILE_BYTES, DEFAULT_UPLOAD_LIMITS.maxFileBytes, 1),
      maxFiles: integer("--max-files", values["max-files"] ?? env.ACS_MAX_FILES, DEFAULT_UPLOAD_LIMITS.maxFiles, 1),
      maxRequestBytes: integer("--max-request-bytes", values["max-request-bytes"] ?? env.ACS_MAX_REQUEST_BYTES, DEFAULT_UPLOAD_LIMITS.maxRequestBytes, 1),
    },
    jsonLimitBytes: integer("--json-limit-bytes", values["json-limit-bytes"] ?? env.ACS_JSON_LIMIT_BYTES, 64 * 1024 * 1024, 1024, MAX_JSON_LIMIT, " (the longest text Node.js holds)"),
    logLevel,
    runtime,
    allowHostExecution: values["allow-host-execution"] ?? truthy(env.ACS_ALLOW_HOST_EXECUTION),
    agentNetwork: values["agent-network"] ?? truthy(env.ACS_AGENT_NETWORK),
    agentIdleSeconds: integer("--agent-idle-seconds", values["agent-idle-seconds"] ?? env.ACS_AGENT_IDLE_SECONDS, 1800, 1),
    sandboxUser: sandboxUser(values["sandbox-user"] ?? env.ACS_SANDBOX_USER),
    sandboxLimits: {
      processes: integer("--sandbox-processes", values["sandbox-processes"] ?? env.ACS_SANDBOX_PROCESSES, 512, 1),
      memoryBytes: integer("--sandbox-memory-bytes", values["sandbox-memory-bytes"] ?? env.ACS_SANDBOX_MEMORY_BYTES, 4 * 1024 ** 3, 1024 * 1024),
      fileBytes: integer("--sandbox-file-bytes", values["sandbox-file-bytes"] ?? env.ACS_SANDBOX_FILE_BYTES, 1024 ** 3, 1),
      cpuSeconds: integer("--sandbox-cpu-seconds", values["sandbox-cpu-seconds"] ?? env.ACS_SANDBOX_CPU_SECONDS, 3600, 1),
      tmpBytes: integer("--sandbox-tmp-bytes", values["sandbox-tmp-bytes"] ?? env.ACS_SANDBOX_TMP_BYTES, 4 * 1024 ** 3, 1024 * 1024),
      shmBytes: integer("--sandbox-shm-bytes", values["sandbox-shm-bytes"] ?? env.ACS_SANDBOX_SHM_BYTES, 64 * 1024 ** 2, 1024 * 1024),
    },
    sandboxCgroup: sandboxCgroup(values["sandbox-cgroup"] ?? env.ACS_SANDBOX_CGROUP),
    ...(storeUrl && { store: { url: storeUrl, maxConnections: storePool, statementTimeoutMs: storeTimeout, leaseTtlMs: leaseTtl, forwardTimeoutMs: forwardTimeout } }),
  };
}
