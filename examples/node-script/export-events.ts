/**
 * Exports a conversation as JSONL on standard output, every event checked against the spec, then
 * follows it live for a while and appends what arrives; a summary goes to standard error.
 *
 *   npx tsx export-events.ts <conversation-id> [--url URL] [--key KEY] [--follow SECONDS] > events.jsonl
 *
 * URL defaults to ACS_URL or acs-mock's http://127.0.0.1:4010; KEY to SESSION_API_KEY.
 */
import { parseArgs } from "node:util";
import { createClient, InvalidEventError, isApiError, NetworkError } from "@acs-toolkit/client";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { url: { type: "string" }, key: { type: "string" }, follow: { type: "string", default: "0" } },
});
const [conversationId] = positionals;
if (!conversationId) {
  console.error("usage: export-events.ts <conversation-id> [--url URL] [--key KEY] [--follow SECONDS]");
  process.exit(2);
}

const client = createClient({
  baseUrl: values.url ?? process.env.ACS_URL ?? "http://127.0.0.1:4010",
  apiKey: values.key ?? process.env.SESSION_API_KEY,
  validate: true, // each received event is checked by @acs-toolkit/validator (installed beside the client)
});

try {
  let exported = 0;
  let lastId: string | undefined;
  for await (const event of client.iterateEvents(conversationId, { limit: 100 })) {
    process.stdout.write(`${JSON.stringify(event)}\n`);
    lastId = event.id;
    exported++;
  }
  console.error(`exported ${exported} stored events`);

  const seconds = Number(values.follow);
  if (seconds > 0) {
    // Resume exactly after the last exported event: nothing missed, nothing twice.
    let live = 0;
    const subscription = client.subscribe(conversationId, {
      from: lastId ? { afterId: lastId } : "start",
      signal: AbortSignal.timeout(seconds * 1000),
      onEvent(event) {
        process.stdout.write(`${JSON.stringify(event)}\n`);
        live++;
      },
    });
    await subscription.done.catch((error: unknown) => {
      if (!(error instanceof Error && error.name === "TimeoutError")) throw error;
    });
    console.error(`followed for ${seconds} s: ${live} live events`);
  }
  console.error(`the conversation has ${await client.countEvents(conversationId)} events`);
} catch (error) {
  if (isApiError(error)) console.error(`the service answered ${error.status}: ${error.message}`);
  else if (error instanceof InvalidEventError) console.error(`an event does not conform: ${error.message}`);
  else if (error instanceof NetworkError) console.error(`no answer: ${error.message}`);
  else throw error;
  process.exitCode = 1;
}
