/**
 * Renders live.ts: the close codes of the live-events channel, read from the `x-close-codes` of its
 * channel in spec/asyncapi.yaml, so that the server and the client share one list.
 */
import type { JsonObject } from "./bundle.js";

const CHANNEL = "conversationEvents";

interface CloseCode {
  name: string;
  code: number;
  meaning: string;
}

/** The close codes of the channel; fails on a malformed entry or one the channel's prose does not name. */
export function closeCodesOf(asyncapi: JsonObject): CloseCode[] {
  const channel = (asyncapi.channels as JsonObject | undefined)?.[CHANNEL] as JsonObject | undefined;
  const list = channel?.["x-close-codes"];
  if (!Array.isArray(list) || list.length === 0) throw new Error(`spec: asyncapi channel ${CHANNEL} has no x-close-codes`);
  const seen = new Set<unknown>();
  return list.map((entry, index) => {
    const { name, code, meaning } = (entry ?? {}) as JsonObject;
    if (typeof name !== "string" || !/^[a-z][A-Za-z]*$/.test(name)) throw new Error(`spec: x-close-codes[${index}].name must be a camelCase identifier`);
    if (typeof code !== "number" || !Number.isInteger(code) || code < 1000 || code > 4999) throw new Error(`spec: x-close-codes ${name}: code must be a WebSocket close code`);
    if (typeof meaning !== "string" || meaning === "") throw new Error(`spec: x-close-codes ${name}: meaning is required`);
    if (seen.has(name) || seen.has(code)) throw new Error(`spec: x-close-codes ${name} (${code}) is listed twice`);
    seen.add(name).add(code);
    // The channel's description is what a reader of the rendered document sees: it must name every code.
    if (typeof channel?.description !== "string" || !channel.description.includes(`\`${code}\``)) {
      throw new Error(`spec: the description of channel ${CHANNEL} does not document close code ${code} (${name})`);
    }
    return { name, code, meaning };
  });
}

export function renderLive(asyncapi: JsonObject, banner: string): string {
  const codes = closeCodesOf(asyncapi);
  const doc = (text: string) => `/** ${text.replaceAll("*/", "*\\/")} */`;
  return [
    `/**\n * ${banner}\n */`,
    "",
    "/** A close code of the live-events channel. */",
    "export interface LiveCloseCode {",
    "  /** Its name in `LIVE_CLOSE_CODES`. */",
    "  readonly name: string;",
    "  /** The WebSocket close code. */",
    "  readonly code: number;",
    "  /** What it means, as the spec says it. */",
    "  readonly meaning: string;",
    "}",
    "",
    `/** Each close code of the live-events channel by name (\`x-close-codes\` of channel ${CHANNEL} in spec/asyncapi.yaml). */`,
    "export const LIVE_CLOSE_CODES = {",
    ...codes.flatMap(({ name, code, meaning }) => [`  ${doc(meaning)}`, `  ${name}: ${code},`]),
    "} as const;",
    "",
    "/** The close codes of the live-events channel with their meanings, in the spec's order. */",
    "export const LIVE_CLOSE_CODE_LIST: readonly LiveCloseCode[] = [",
    ...codes.map(({ name, code, meaning }) => `  { name: ${JSON.stringify(name)}, code: ${code}, meaning: ${JSON.stringify(meaning)} },`),
    "];",
  ].join("\n") + "\n";
}
