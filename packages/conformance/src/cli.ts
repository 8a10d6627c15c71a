/**
 * `acs-conformance --base-url URL [--api-key KEY]`: runs the suite against a running implementation.
 * Exit status: 0 every check passed (skips allowed), 1 a check failed, 2 a usage error, nothing
 * answers at the base URL, or the suite could not run.
 */
import { EXIT_USAGE, parseCommandLine, UsageError, usageErrorLine } from "@acs-toolkit/cli-kit";
import packageJson from "../package.json" with { type: "json" };
import { CHECKS } from "./checks/index.js";
import { formatCheckTable, formatJson, formatJUnit, formatResultLine, formatTotal } from "./report.js";
import { DEFAULT_TIMEOUT_MS, runConformance, selectChecks, UnknownPatternError, UnreachableError } from "./runner.js";

export const USAGE = `Usage: acs-conformance --base-url URL [options]

Runs black-box checks derived from the Agent Conversation Service spec against a running
implementation and prints one line per check (pass, FAIL with the evidence, skip with the reason)
and a total. The suite WRITES to the implementation: it creates conversations, uploads files and
overwrites the account's settings and git-provider tokens with test values. Use a test account.

Options:
  --base-url URL        where the implementation answers (required), e.g. http://127.0.0.1:3000
  --api-key KEY         the X-Session-API-Key to send [SESSION_API_KEY]; without one the
                        authentication checks are skipped
  --format FORMAT       text (default, streamed), json or junit
  --only PATTERN        run only matching checks; repeatable or comma-separated
  --skip PATTERN        leave out matching checks; repeatable or comma-separated
  --timeout MS          time one check (and one request) may take (default ${DEFAULT_TIMEOUT_MS})
  --settle MS           ignored (deprecated): an implementation whose agent records events of
                        its own at any pace needs no waiting
  --list                print the checks (id, what must hold, spec, needs) and exit
  -h, --help            print this help
  -v, --version         print the version

A pattern is a check id (search.filter.kind), a group (search, bad-input), a glob (*.timestamp-*)
or a capability a check needs (websocket, append, extension:getSettings).

Exit status: 0 all checks passed (skips allowed), 1 a check failed, 2 usage error, nothing
answers at the base URL, or the suite could not run.
`;

/** Where the CLI writes (standard output and error by default). */
export interface Output {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** The CLI as a function (the bin calls it with process.argv), so that tests can run it in-process. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env, io: Output = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) }): Promise<number> {
  try {
    const { values } = parseCommandLine({
      args: argv,
      allowPositionals: false,
      options: {
        "base-url": { type: "string" },
        "api-key": { type: "string" },
        format: { type: "string", default: "text" },
        only: { type: "string", multiple: true },
        skip: { type: "string", multiple: true },
        timeout: { type: "string" },
        settle: { type: "string" },
        list: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "v" },
      },
    });
    if (values.help) {
      io.out(USAGE);
      return 0;
    }
    if (values.version) {
      io.out(`${packageJson.version}\n`);
      return 0;
    }
    const split = (list: string[] | undefined) => (list ?? []).flatMap((item) => item.split(",")).map((p) => p.trim()).filter(Boolean);
    const only = split(values.only);
    const skip = split(values.skip);
    if (values.list) {
      io.out(formatCheckTable(selectChecks(CHECKS, only, skip)) + "\n");
      return 0;
    }
    const format = values.format!;
    if (!["text", "json", "junit"].includes(format)) throw new UsageError(`--format must be text, json or junit, got "${format}"`);
    if (!values["base-url"]) throw new UsageError("--base-url is required");
    let baseUrl: URL;
    try {
      baseUrl = new URL(values["base-url"]);
    } catch {
      throw new UsageError(`--base-url must be a URL, got "${values["base-url"]}"`);
    }
    if (!["http:", "https:"].includes(baseUrl.protocol)) throw new UsageError(`--base-url must be http or https, got "${baseUrl.protocol}"`);
    const milliseconds = (name: string, text: string | undefined, min: number) => {
      if (text === undefined) return undefined;
      if (!/^\d+$/.test(text) || Number(text) < min) throw new UsageError(`--${name} must be a whole number of milliseconds of at least ${min}, got "${text}"`);
      return Number(text);
    };
    const timeoutMs = milliseconds("timeout", values.timeout, 1);
    milliseconds("settle", values.settle, 0); // deprecated and ignored; still checked, as it was
    const report = await runConformance({
      baseUrl,
      apiKey: values["api-key"] ?? (env.SESSION_API_KEY || undefined),
      only,
      skip,
      timeoutMs,
      onResult: format === "text" ? (result) => io.out(formatResultLine(result) + "\n") : undefined,
    });
    io.out(format === "text" ? formatTotal(report) + "\n" : format === "json" ? formatJson(report) : formatJUnit(report));
    return report.failed > 0 ? 1 : 0;
  } catch (error) {
    if (error instanceof UsageError || error instanceof UnknownPatternError) {
      io.err(`${usageErrorLine("acs-conformance", error.message)}\n`);
      return EXIT_USAGE;
    }
    if (error instanceof UnreachableError) {
      io.err(`acs-conformance: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}
