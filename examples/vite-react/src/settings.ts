/** Where the app's service is and which conversation it shows: `?api=…&key=…&conversation=…[&msw]`. */
export interface Settings {
  /** The service's base URL (acs-mock's by default, `VITE_ACS_URL` at build time). */
  api: string;
  /** X-Session-API-Key (acs-mock's default key). */
  key: string;
  /** The conversation to show; without one the app lists acs-mock's scenarios. */
  conversation: string | undefined;
  /** `?msw`: the mock runs in the page, through MSW's Service Worker (msw.ts), instead of at `api`. */
  msw: boolean;
}

export function readSettings(search: string): Settings {
  const query = new URLSearchParams(search);
  return {
    api: query.get("api") ?? import.meta.env.VITE_ACS_URL ?? "http://127.0.0.1:4010",
    key: query.get("key") ?? "mock-session-key",
    conversation: query.get("conversation") ?? undefined,
    msw: query.has("msw"),
  };
}
