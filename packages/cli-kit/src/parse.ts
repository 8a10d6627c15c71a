/** node:util's parseArgs, with its errors turned into one-line usage errors that suggest the closest option. */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { closestOption } from "./suggest.js";

/** The exit code of every usage error (0 is success, 1 each command's own failure). */
export const EXIT_USAGE = 2;

/** A command line the command cannot run: print {@link usageErrorLine} and exit with {@link EXIT_USAGE}. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** The one line a command prints on a usage error: `acs-x: <message>; see acs-x --help`. */
export function usageErrorLine(command: string, message: string): string {
  return `${command}: ${message}; see ${command} --help`;
}

export type CommandLineConfig = Omit<ParseArgsConfig, "strict" | "tokens">;

type Options = NonNullable<ParseArgsConfig["options"]>;

/** What the user typed for an option token: `--name` or `-n` (never its value). */
const spelled = (token: { rawName: string }) => token.rawName.split("=")[0]!;

function unknownOption(rawName: string, options: Options): string {
  if (!rawName.startsWith("--")) return `unknown option ${rawName}`;
  const suggestion = closestOption(rawName.slice(2), Object.keys(options));
  return `unknown option ${rawName}${suggestion ? ` (did you mean --${suggestion}?)` : ""}`;
}

/** parseArgs' own messages ("Option '-p, --port <value>' argument missing") in the commands' words. */
function translate(error: Error & { code?: string }, options: Options): string {
  const name = /--[\w-]+/.exec(error.message)?.[0] ?? /'(-\w)'/.exec(error.message)?.[1] ?? "";
  switch (error.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return unknownOption(/'([^']+)'/.exec(error.message)?.[1] ?? name, options);
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return `unexpected argument ${JSON.stringify(/'([^']*)'/.exec(error.message)?.[1] ?? "")} (this command takes options only)`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      if (/does not take an argument/.test(error.message)) return `option ${name} takes no value`;
      if (/ambiguous/.test(error.message)) return `option ${name} needs a value (write ${name}=-value for one that starts with "-")`;
      return `option ${name} needs a value`;
    default:
      return error.message;
  }
}

/**
 * Parses a command line strictly. Every problem throws a {@link UsageError} (or `error`, to keep a
 * package's public error class) with a message in one style: `unknown option --prot (did you mean
 * --port?)`, `option --port needs a value`, `option --help takes no value`.
 */
export function parseCommandLine<const T extends CommandLineConfig>(
  config: T,
  error: new (message: string) => Error = UsageError,
): ReturnType<typeof parseArgs<T & { strict: true }>> {
  const options = config.options ?? {};
  // Unknown options first, found on a lenient pass, so each is named as typed and gets a suggestion.
  const { tokens } = parseArgs({ ...config, strict: false, allowPositionals: true, tokens: true });
  // A known short option's token carries its long name; an unknown one's, the letter typed.
  for (const token of tokens ?? []) {
    if (token.kind === "option" && !(token.name in options)) throw new error(unknownOption(spelled(token), options));
  }
  try {
    return parseArgs({ ...config, strict: true }) as ReturnType<typeof parseArgs<T & { strict: true }>>;
  } catch (cause) {
    throw new error(translate(cause as Error & { code?: string }, options));
  }
}
