#!/usr/bin/env node
/** `acs-server`: the reference server on an embedded SQLite store. */
import { EXIT_USAGE, usageErrorLine } from "@acs-toolkit/cli-kit";
import { ConfigError, parseConfig, USAGE } from "./config.js";
import { VERSION } from "./version.js";

async function main(): Promise<void> {
  let config;
  try {
    config = parseConfig(process.argv.slice(2));
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${usageErrorLine("acs-server", error.message)}\n`);
      process.exit(EXIT_USAGE);
    }
    throw error;
  }
  if (config.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (config.version) {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  // The server's modules (the stores, the agent, the compiled validators) load only to serve: `--help`
  // and `--version` answer without them.
  const [{ startServer }, { reportEventLoopDelay }] = await Promise.all([import("./server.js"), import("./event-loop-report.js")]);
  const server = await startServer(config);
  reportEventLoopDelay(); // to a parent process that started this one with an IPC channel (fuzzer, benchmark)
  if (server.keys.generated) {
    // Printed once, at the start that created it; afterwards it is only in the 0600 key file.
    process.stdout.write(
      `\nGenerated a session API key (stored in ${config.dataDir}/session-api-key, shown only now):\n\n  X-Session-API-Key: ${server.keys.generated}\n\n`,
    );
  }
  process.stdout.write(`acs-server listening on ${server.url} (docs: ${server.url}/docs)\n`);
  let stopping = false;
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      void server.close().then(() => process.exit(0));
    });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`acs-server: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
