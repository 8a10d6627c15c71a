#!/usr/bin/env node
/** The `acs-conformance` bin. */
import { main } from "./cli.js";

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  // Not a finding about the implementation: the suite itself could not run (exit 2, not 1).
  console.error(`acs-conformance: the suite could not run: ${(error as Error).stack ?? String(error)}`);
  process.exitCode = 2;
}
