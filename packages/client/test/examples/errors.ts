import { AbortError, createClient, isApiError, NetworkError } from "@acs-toolkit/client";

const baseUrl = process.env.ACS_URL ?? "http://127.0.0.1:3000";
const client = createClient({ baseUrl, apiKey: process.env.SESSION_API_KEY });
const missing = "3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9";

// A 422 carries the parsed HTTPValidationError: `loc` points at the culprit.
try {
  await client.searchEvents(missing, { limit: 500 });
} catch (error) {
  if (!isApiError(error, "searchEvents") || !error.is(422)) throw error;
  console.log(error.detail[0]?.loc); // [ 'query', 'limit' ]
}

// Other statuses carry the server's ErrorDetail; `is(status)` narrows the body to that status's.
try {
  await client.getConversation(missing);
} catch (error) {
  if (!isApiError(error, "getConversation") || !error.is(404)) throw error;
  console.log(error.body.detail); // Conversation not found: 3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9
}

const stranger = createClient({ baseUrl, apiKey: "not-the-key" });
await stranger.getSettings().catch((error: unknown) => {
  if (isApiError(error)) console.log(error.message); // getSettings: 401 Unauthorized
});

// No answer at all: a NetworkError (or an AbortError when the call's signal fires), never an ApiError.
const nowhere = createClient({ baseUrl: "http://127.0.0.1:9" });
await nowhere.getHealth({ signal: AbortSignal.timeout(5_000) }).catch((error: unknown) => {
  console.log(error instanceof NetworkError, error instanceof AbortError); // true false
});
