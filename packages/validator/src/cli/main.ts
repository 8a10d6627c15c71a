#!/usr/bin/env node
/** `acs-validate`: the command-line entry (see run.ts, and `acs-validate --help`). */
import { run } from "./run.js";

process.exitCode = await run({ argv: process.argv.slice(2) });
