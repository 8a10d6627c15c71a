/** The command line of `acs-validate`, read with node:util's parseArgs. */
import { parseCommandLine } from "@acs-toolkit/cli-kit";
import { DEFAULT_PROFILE, FIRST_RELEASE, isProfile, type Profile } from "../profile.js";
import type { OutputFormat } from "./report.js";

interface CliOptions {
  paths: string[];
  format: OutputFormat;
  sequence: boolean;
  profile: Profile;
  unknownKinds: "error" | "warn";
  unknownProperties: "error" | "warn";
  maxErrors: number | undefined;
  /** undefined: decided by the terminal and the environment. */
  progress: boolean | undefined;
  color: boolean | undefined;
  help: boolean;
  version: boolean;
}

/** A command line the command cannot run: exit code 2, with this message and a hint. */
export class UsageError extends Error {}

export const USAGE = `Usage: acs-validate [options] <path…>

Validates recorded Agent Conversation Service events: each event against the schema (by
default everything a shipped OpenHands release writes), and each trajectory against the
sequence rules.

Paths: files, directories and globs ("recordings/**/*.jsonl"); "-" reads standard input.
Each is recognised by its content: one event, a JSON array of events, JSONL (one event a
line), an EventPage ({"items": [...]}), gzip-compressed versions of these, or a directory
of per-event files as the reference implementation stores them (event-00000-<id>.json, in
index order). Any other directory is searched for .json, .jsonl and .ndjson files.

Options:
  --format <human|json|junit|github|html>
                                      output format (default: human); html: one
                                      self-contained page, the recordings as conversations
                                      with each issue at its event (acs-validate --format
                                      html rec.jsonl > report.html)
  --no-sequence                       skip the sequence rules (unique ids, observations
                                      answering earlier actions, tool calls answered once,
                                      known forgotten ids and parents, time order, system
                                      prompt first)
  --profile <name>                    the catalogue to accept: releases (default: what any
                                      shipped release writes), interface (exactly the
                                      interface 0.1.0 catalogue), or a release such as 1.11.5
  --unknown-kinds <error|warn>        a kind from a newer version (default: error)
  --unknown-properties <error|warn>   a property a strict object does not declare (default: error)
  --max-errors <n>                    stop after n errors
  --no-progress, --progress           the progress line on standard error (default: on a
                                      terminal, not piped, not in CI, for inputs over 8 MB)
  --color, --no-color                 colours in the human format (default: on a terminal)
  -h, --help                          this help
  -v, --version                       the version

Exit codes:
  0  every input is valid (warnings allowed)
  1  an input is invalid (an error in an event, a sequence rule, a broken JSON line)
  2  a usage error, or an input that cannot be read as events (missing, unreadable,
     empty, binary, not JSON); 2 wins over 1
`;

const FORMATS: readonly OutputFormat[] = ["human", "json", "junit", "github", "html"];

export function parseCliArgs(argv: readonly string[]): CliOptions {
  const { values, positionals } = parseCommandLine(
    {
      args: [...argv],
      allowPositionals: true,
      options: {
        format: { type: "string" },
        "no-sequence": { type: "boolean" },
        profile: { type: "string" },
        "unknown-kinds": { type: "string" },
        "unknown-properties": { type: "string" },
        "max-errors": { type: "string" },
        "no-progress": { type: "boolean" },
        progress: { type: "boolean" },
        color: { type: "boolean" },
        "no-color": { type: "boolean" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "v" },
      },
    },
    UsageError,
  );
  const choice = <T extends string>(name: string, value: string | undefined, allowed: readonly T[], fallback: T): T => {
    if (value === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--${name} must be one of ${allowed.join(", ")}, got ${JSON.stringify(value)}`);
    return value as T;
  };
  let maxErrors: number | undefined;
  if (values["max-errors"] !== undefined) {
    const text = values["max-errors"];
    if (!/^[1-9]\d*$/.test(text) || !Number.isSafeInteger(Number(text))) throw new UsageError(`--max-errors must be a whole number of at least 1, got ${JSON.stringify(text)}`);
    maxErrors = Number(text);
  }
  const profile = values.profile ?? DEFAULT_PROFILE;
  if (!isProfile(profile)) {
    throw new UsageError(`--profile must be releases, interface or a release from ${FIRST_RELEASE} on (such as 1.11.5), got ${JSON.stringify(profile)}`);
  }
  const options: CliOptions = {
    paths: positionals,
    format: choice("format", values.format, FORMATS, "human"),
    sequence: !values["no-sequence"],
    profile,
    unknownKinds: choice("unknown-kinds", values["unknown-kinds"], ["error", "warn"] as const, "error"),
    unknownProperties: choice("unknown-properties", values["unknown-properties"], ["error", "warn"] as const, "error"),
    maxErrors,
    progress: values["no-progress"] ? false : values.progress ? true : undefined,
    color: values["no-color"] ? false : values.color ? true : undefined,
    help: values.help ?? false,
    version: values.version ?? false,
  };
  if (!options.help && !options.version && options.paths.length === 0) {
    throw new UsageError('no input: give files, directories or globs, or "-" for standard input');
  }
  return options;
}
