import { describe, expect, it } from "vitest";
import { closestOption, editDistance, parseCommandLine, UsageError, usageErrorLine } from "../src/index.js";

const config = {
  options: {
    port: { type: "string" },
    "data-dir": { type: "string" },
    "cors-origin": { type: "string", multiple: true },
    format: { type: "string" },
    "no-sequence": { type: "boolean" },
    help: { type: "boolean", short: "h" },
    version: { type: "boolean", short: "v" },
  },
} as const;

const failure = (args: string[], extra: object = {}) => {
  try {
    parseCommandLine({ ...config, ...extra, args });
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`accepted ${args.join(" ")}`);
};

describe("parseCommandLine", () => {
  it("parses what parseArgs parses", () => {
    const { values, positionals } = parseCommandLine({ ...config, allowPositionals: true, args: ["--port", "0", "-h", "--cors-origin=a", "--cors-origin", "b", "file"] });
    expect(values).toEqual({ port: "0", help: true, "cors-origin": ["a", "b"] });
    expect(positionals).toEqual(["file"]);
  });

  it.each([
    [["--prot", "1"], "unknown option --prot (did you mean --port?)"],
    [["--verison"], "unknown option --verison (did you mean --version?)"],
    [["--data", "x"], "unknown option --data (did you mean --data-dir?)"],
    [["--cors-orgin=x"], "unknown option --cors-orgin (did you mean --cors-origin?)"],
    [["--formt", "json"], "unknown option --formt (did you mean --format?)"],
    [["--Port"], "unknown option --Port (did you mean --port?)"],
    [["--zzz"], "unknown option --zzz"],
    [["-x"], "unknown option -x"],
    [["--port", "1", "--help", "--sequence"], "unknown option --sequence (did you mean --no-sequence?)"],
  ])("%j: %s", (args, message) => {
    expect(failure(args)).toBe(message);
  });

  it("names a missing value, a value given to a flag, an ambiguous value and a stray argument in the same style", () => {
    expect(failure(["--port"])).toBe("option --port needs a value");
    expect(failure(["--help=yes"])).toBe("option --help takes no value");
    expect(failure(["--port", "--help"])).toBe('option --port needs a value (write --port=-value for one that starts with "-")');
    expect(failure(["stray"])).toBe('unexpected argument "stray" (this command takes options only)');
  });

  it("throws the error class it is given (a package's public error class)", () => {
    class ConfigError extends Error {}
    expect(() => parseCommandLine({ ...config, args: ["--prot"] }, ConfigError)).toThrow(ConfigError);
  });
});

describe("closestOption", () => {
  it("suggests within a third of the length in edits, or a name the input starts", () => {
    expect(closestOption("prot", ["port", "host"])).toBe("port");
    expect(closestOption("hots", ["port", "host"])).toBe("host");
    expect(closestOption("log", ["log-level"])).toBe("log-level");
    expect(closestOption("lo", ["log-level"])).toBeUndefined();
    expect(closestOption("banana", ["port", "host"])).toBeUndefined();
    expect(closestOption("sped", ["seed", "speed"])).toBe("speed");
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("ab", "ba")).toBe(1);
  });
});

describe("usageErrorLine", () => {
  it("is one line naming the command and its help", () => {
    expect(usageErrorLine("acs-x", "unknown option --foo (did you mean --bar?)")).toBe("acs-x: unknown option --foo (did you mean --bar?); see acs-x --help");
  });
});

describe("an unknown option comes first", () => {
  it("is named even when a stray argument follows it", () => {
    expect(failure(["--prot", "3000"])).toBe("unknown option --prot (did you mean --port?)");
  });
});
