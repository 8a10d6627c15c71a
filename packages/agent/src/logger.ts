/**
 * Where the runtime reports what an operator should know (a server that cannot be reached, a
 * budget that cannot be enforced). Structured: the first argument holds fields (conversation id,
 * names, counts), never a secret. A pino logger fits as is; the default says nothing.
 */
export interface Logger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
