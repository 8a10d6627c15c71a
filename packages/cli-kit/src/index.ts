/**
 * The command-line conventions of the toolkit's four commands (acs-server, acs-mock, acs-validate,
 * acs-conformance), in one place so that they cannot drift apart:
 *
 * - a usage error is one line, `acs-x: unknown option --foo (did you mean --bar?); see acs-x --help`,
 *   and exit code 2;
 * - a mistyped option gets the closest known one as a suggestion;
 * - `-v, --version` prints the package's version.
 *
 * This package is private: each command bundles it (tsup inlines devDependencies), so no published
 * package depends on another one for it.
 */
export { closestOption, editDistance } from "./suggest.js";
export { parseCommandLine, UsageError, usageErrorLine, EXIT_USAGE, type CommandLineConfig } from "./parse.js";
