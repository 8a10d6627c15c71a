/**
 * @packageDocumentation
 * The typed client of the Agent Conversation Service: one method per operation of the spec, typed
 * by the generated `paths` of `@acs-toolkit/schema`, on openapi-fetch.
 *
 * This is the entry for browsers and bundlers (conditions `browser`, `import`, `require`, `default`):
 * it imports nothing Node-only. Under the `node` condition the package resolves to `./node.js`,
 * which adds file paths to `uploadFiles`.
 */
import { createClientFor, type AcsClient, type ClientOptions } from "./client.js";
import type { UploadInput } from "./files.js";

export * from "./shared.js";

/**
 * A client for the service at `options.baseUrl`.
 *
 * @example
 * const client = createClient({ baseUrl: "https://acs.example.com", apiKey });
 * for await (const event of client.iterateEvents(conversationId, { kind: "MessageEvent" })) render(event);
 */
export function createClient(options: ClientOptions): AcsClient<UploadInput> {
  return createClientFor<UploadInput>(options, {});
}
